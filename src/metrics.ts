// Prometheus metrics (prom-client): requests by route template and status, request durations, queue depths, database size.
import { Counter, Histogram, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsProbes {
  /** Items waiting per durable queue (queued or running), e.g. `{workflow_runs: 3}`. */
  queueDepths(): Promise<Record<string, number>>;
  /** Bytes the database takes. */
  databaseBytes(): Promise<number>;
}

export function createMetrics(probes: MetricsProbes) {
  // A registry of its own: tests build several apps in one process.
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total', help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const, registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds', help: 'Time to answer an HTTP request, by route template',
    labelNames: ['route'] as const, buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10], registers: [registry],
  });
  new Gauge({
    name: 'queue_depth', help: 'Items queued or running in each durable queue', labelNames: ['queue'] as const, registers: [registry],
    async collect() {
      this.reset();
      for (const [queue, n] of Object.entries(await probes.queueDepths())) this.set({ queue }, n);
    },
  });
  new Gauge({
    name: 'database_size_bytes', help: 'Size of the database', registers: [registry],
    async collect() {
      this.set(await probes.databaseBytes());
    },
  });

  return {
    contentType: registry.contentType,
    /**
     * Counts an answered request. `route` is the template (never the raw path), so the label set stays bounded:
     * paths that match no route are counted as "unmatched".
     */
    observe(route: string | undefined, method: string, status: number, seconds: number) {
      const r = route ?? 'unmatched';
      requests.inc({ route: r, method, status: String(status) });
      duration.observe({ route: r }, seconds);
    },
    text: () => registry.metrics(),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
