# Build: docker build -t hookinbox .
# Run:   docker run -e DATABASE_URL=postgres://... -e HOOKINBOX_ADMIN_TOKEN=... \
#          -e GITHUB_WEBHOOK_SECRET=... -e STRIPE_WEBHOOK_SECRET=... -p 8080:8080 hookinbox
# The image holds no PostgreSQL: DATABASE_URL is required. See deploy/.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/hookinbox ./cmd/hookinbox

# distroless/static: CA certificates and a nonroot user, nothing else.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hookinbox /usr/local/bin/hookinbox
COPY deploy/hookinbox.yaml /etc/hookinbox/hookinbox.yaml
ENV HOOKINBOX_CONFIG=/etc/hookinbox/hookinbox.yaml
USER nonroot:nonroot
EXPOSE 8080 8081
# No shell in the image: the binary probes itself.
HEALTHCHECK --interval=10s --timeout=5s --retries=3 CMD ["/usr/local/bin/hookinbox", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/hookinbox"]
CMD ["serve"]
