package slurm

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"lookahead/slurm/slurmtest"
)

// The live tests share one private cluster (slurmtest.Shared); Main
// stops it after the last test.
func TestMain(m *testing.M) { os.Exit(slurmtest.Main(m)) }

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func strconvID(id int64) string { return strconv.FormatInt(id, 10) }
