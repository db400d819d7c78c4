# olmsync's image for those who build with Docker. The Makefile does not use this file:
# `make image` builds the same image without a Docker engine (internal/ociimage: a static
# binary on a base of passwd, group and CA certificates, user 65532, no shell), reproducibly.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg REVISION=$(git rev-parse HEAD) -t olmsync:dev .

# Build: a static binary (no cgo), no paths of the build machine.
FROM golang:1.27 AS build
ARG VERSION=devel
ARG REVISION=
ARG SOURCE_DATE_EPOCH=0
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${REVISION} -X main.date=$(date -u -d @${SOURCE_DATE_EPOCH} +%Y-%m-%dT%H:%M:%SZ)" \
      -o /out/olmsync ./cmd/olmsync

# Run: distroless static — CA certificates, the nonroot user 65532, no shell.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=devel
ARG REVISION=
LABEL org.opencontainers.image.source="https://github.com/olmsync/olmsync" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.title="olmsync"
COPY --from=build /out/olmsync /usr/local/bin/olmsync
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/olmsync"]
CMD ["run"]
