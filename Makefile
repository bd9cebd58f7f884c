# make build     the binary for this machine, in bin/
# make release   static binaries for linux and darwin, amd64 and arm64, in
#                dist/, with checksums (what .goreleaser.yaml builds, with
#                plain go build)
# make test      the test command of README.md (CI: go test -race ./...)

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: build release test clean

build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/snowclaw ./cmd/snowclaw

release:
	rm -rf dist && mkdir -p dist
	for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags "$(LDFLAGS)" \
			-o dist/snowclaw_$(VERSION)_$${os}_$${arch}/snowclaw ./cmd/snowclaw || exit 1; \
		cp LICENSE README.md config.example.toml dist/snowclaw_$(VERSION)_$${os}_$${arch}/; \
		tar -C dist -czf dist/snowclaw_$(VERSION)_$${os}_$${arch}.tar.gz snowclaw_$(VERSION)_$${os}_$${arch}; \
	done
	cd dist && sha256sum *.tar.gz > checksums.txt

test:
	go test -short ./...

clean:
	rm -rf bin dist
