# make test  — the whole suite (what CI runs)
# make demo  — the one-command demo on an embedded default
.PHONY: test demo build

build:
	go build ./...

test:
	./scripts/test.sh

demo:
	go run ./cmd/lookahead demo
