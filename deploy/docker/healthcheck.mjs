// The container health check: GET /healthz on METRICS_PORT, healthy on a 2xx answer within the
// timeout. Every service serves it; the image sets METRICS_PORT, and so do compose and the
// Kubernetes manifests.
const port = Number(process.env.METRICS_PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error(`healthcheck: METRICS_PORT must be a fixed port, got "${process.env.METRICS_PORT ?? ''}"`);
  process.exit(1);
}

try {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
  if (!response.ok) {
    console.error(`healthcheck: /healthz answered ${response.status} ${await response.text()}`);
    process.exit(1);
  }
} catch (error) {
  console.error(
    `healthcheck: /healthz on port ${port} did not answer: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
}
