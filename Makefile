# make test      — the whole suite (what CI runs), packaging checks included
# make demo      — the one-command demo on an embedded default
# make rpm       — lookahead-agent, lookahead-broker and lookahead RPMs in dist/
# make rpm-clean — the same, built from a fresh clone of HEAD (release builds)
# make deb       — RPMs and DEBs in dist/
.PHONY: test demo build rpm rpm-clean deb test-packaging

build:
	go build ./...

test:
	./scripts/test.sh

test-packaging:
	./scripts/test-packaging.sh

demo:
	go run ./cmd/lookahead demo

rpm:
	./scripts/build-rpms.sh

rpm-clean:
	./scripts/build-rpms.sh --clean-clone

deb:
	./scripts/build-rpms.sh --deb
