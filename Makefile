# make test      — the whole suite (what CI runs), packaging checks included
# make demo      — the one-command demo on an embedded default
# make install   — the three binaries into $(go env GOPATH)/bin (or GOBIN), their
#                  --version stamped from git as the packages' (scripts/version.sh)
# make bin       — the same into ./bin
# make rpm       — lookahead-agent, lookahead-broker and lookahead RPMs in dist/
# make rpm-clean — the same, built from a fresh clone of HEAD (release builds)
# make deb       — RPMs and DEBs in dist/
.PHONY: test demo build bin install rpm rpm-clean deb test-packaging

# The version the binaries print: "0.0.0-0.812.g1a2b3c4d5e" (version-release,
# as the packages); evaluated only by the targets that use it.
STAMP = $(shell scripts/version.sh 2>/dev/null | tr ' ' -)
LDFLAGS = -X lookahead/internal/version.Stamp=$(STAMP)

build:
	go build ./...

bin:
	go build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/lookahead ./cmd/lookahead-agent ./cmd/lookahead-broker

install:
	go install -ldflags "$(LDFLAGS)" ./cmd/lookahead ./cmd/lookahead-agent ./cmd/lookahead-broker

test:
	./scripts/test.sh

test-packaging:
	./scripts/test-packaging.sh

demo:
	go run -ldflags "$(LDFLAGS)" ./cmd/lookahead demo

rpm:
	./scripts/build-rpms.sh

rpm-clean:
	./scripts/build-rpms.sh --clean-clone

deb:
	./scripts/build-rpms.sh --deb
