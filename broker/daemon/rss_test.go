package daemon

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"lookahead/broker/brokertest"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// bombChildEnv makes the test binary run only a broker (the child of
// TestAttackBombRSS) connected to the URL it holds.
const bombChildEnv = "LOOKAHEAD_RSS_CHILD_NATS"

// rssSubject is where the child answers with its memory figures.
const rssSubject = "test.rss"

// TestAttackBombRSS measures what issue 15.2's attack costs the broker:
// a broker runs alone in a child process (this test binary), a site sends
// it a gzip bomb of about 600 KB that inflates to 600 MB, on its forecast
// subject and in the bucket, and the child reports its peak resident set
// (VmHWM) before and after. The broker used to reach about 1 GB.
func TestAttackBombRSS(t *testing.T) {
	if url := os.Getenv(bombChildEnv); url != "" {
		runBombChild(t, url)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	srv, nc := natstest.Start(t)
	js, _ := jetstream.New(nc)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: wire.ForecastBucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestAttackBombRSS$")
	child.Env = append(os.Environ(), bombChildEnv+"="+srv.ClientURL())
	child.Stderr = os.Stderr
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("child: %q %v", line, err)
	}
	before := askRSS(t, nc)
	data := bombData(600 << 20)
	msg := nats.NewMsg(wire.ForecastSubject("alpha"))
	msg.Header.Set(wire.HeaderType, wire.TypeForecast)
	msg.Data = data
	if err := nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), "alpha", data); err != nil {
		t.Fatal(err)
	}
	after := settledRSS(t, nc)
	t.Logf("bomb of %d bytes (600 MB inflated): broker peak RSS %d MB before, %d MB after",
		len(data), before/1024, after/1024)
	if grown := after - before; grown > 200<<10 {
		t.Errorf("the bomb grew the broker's peak RSS by %d MB, want under 200 MB", grown/1024)
	}
}

// settledRSS asks the child for its peak RSS until it stops growing (by
// more than 1 MB in a second: answering the questions costs a little).
func settledRSS(t *testing.T, nc *nats.Conn) int64 {
	prev := askRSS(t, nc)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		cur := askRSS(t, nc)
		if cur-prev < 1024 {
			return cur
		}
		prev = cur
	}
	return prev
}

func askRSS(t *testing.T, nc *nats.Conn) int64 {
	t.Helper()
	m, err := nc.Request(rssSubject, nil, 30*time.Second)
	if err != nil {
		t.Fatalf("ask the child: %v", err)
	}
	v, err := strconv.ParseInt(string(m.Data), 10, 64)
	if err != nil {
		t.Fatalf("child answered %q", m.Data)
	}
	return v
}

// runBombChild runs a broker until killed and answers rssSubject with its
// peak RSS in kB.
func runBombChild(t *testing.T, url string) {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(nc, Config{Planner: brokertest.Planner, Queue: FCFS, CycleInterval: time.Hour, Debounce: time.Hour,
		Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	nc.Subscribe(rssSubject, func(m *nats.Msg) { m.Respond([]byte(strconv.FormatInt(peakRSS(), 10))) })
	go b.Run(context.Background())
	<-b.Ready()
	fmt.Println("ready")
	select {}
}

// peakRSS is this process's VmHWM in kB.
func peakRSS() int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return -1
}
