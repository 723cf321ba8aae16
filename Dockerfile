# syntax=docker/dockerfile:1

# The A2A gateway image: a static binary on distroless, running as nonroot.
#
#   docker build -t a2a-gateway --build-arg VERSION=$(git describe --always --dirty) .
#   docker run --rm -p 8080:8080 a2a-gateway demo --listen :8080
#
# The default config (configs/sidecar.yaml) fronts an agent on
# 127.0.0.1:9999 and needs PUBLIC_URL; mount your own at
# /etc/a2a-gateway/config.yaml, or pass -config.

# The builder runs on the build host's platform and cross-compiles, so a
# multi-platform build (--platform linux/amd64,linux/arm64) needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src

# Dependencies first, in a layer of their own: it is rebuilt only when
# go.mod or go.sum change, not on every source edit.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download && go mod verify

COPY . .
ARG TARGETOS TARGETARCH
# What `gateway version` prints: the context has no .git for Go to stamp a
# revision from, so pass one, e.g. --build-arg VERSION=$(git describe --always --dirty).
ARG VERSION=unknown
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w -X main.buildVersion=${VERSION}" -o /out/gateway ./cmd/gateway

# static-debian12 has CA certificates and tzdata, and no shell or libc: the
# binary is static (CGO_ENABLED=0).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
COPY configs/sidecar.yaml /etc/a2a-gateway/config.yaml
USER nonroot:nonroot
# 8080 is traffic; 9090 is the admin listener (/healthz, /readyz, /metrics).
EXPOSE 8080 9090
# No HEALTHCHECK: the image has no shell or curl to run one, and Kubernetes
# ignores it anyway. Probe the admin port instead: liveness GET /healthz,
# readiness GET /readyz (see deploy/kubernetes/deployment.yaml).
ENTRYPOINT ["/gateway"]
CMD ["-config", "/etc/a2a-gateway/config.yaml"]
