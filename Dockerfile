# syntax=docker/dockerfile:1
# Snowclaw relay: a static binary on a distroless base, run as a non-root
# user, with its data (event store, search index, keys) on a volume.
#
#   docker build -t snowclaw --build-arg VERSION=$(git describe --tags --always) .
#   docker run -d -p 3334:3334 -v snowclaw-data:/data -e SNOWCLAW_OWNER=npub1… --stop-timeout 180 snowclaw
#
# --stop-timeout: a stop writes the search index's image, which the next
# start reads back instead of rebuilding the index; Docker's default of
# 10 s cuts that short on a large index.
#
# Every setting is an environment variable (SNOWCLAW_*, see
# config.example.toml); deploy/compose.yaml runs it with PostgreSQL.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# modules first: this layer is rebuilt only when go.mod or go.sum change
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# CGO off: a static binary that runs on distroless/static (no libc)
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/snowclaw ./cmd/snowclaw \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/snowclaw /usr/local/bin/snowclaw
# the volume's mount point belongs to the runtime user, so a fresh named
# volume is writable by it
COPY --from=build --chown=65532:65532 /out/data /data
# distroless "nonroot": uid and gid 65532, no shell, no package manager
USER 65532:65532
ENV SNOWCLAW_ADDR=0.0.0.0:3334 \
    SNOWCLAW_DATA=/data
VOLUME ["/data"]
EXPOSE 3334
# the image has no curl: the binary asks its own /readyz, which says
# ready once searches are answered too (the relay serves everything else
# from its first second while the search index loads). A first start
# builds the index from the events, minutes at a million memories: the
# start period lets it, and a restart reads the index back in seconds.
HEALTHCHECK --interval=15s --timeout=5s --start-period=10m --retries=3 \
  CMD ["/usr/local/bin/snowclaw", "health"]
ENTRYPOINT ["/usr/local/bin/snowclaw"]
CMD ["serve"]
