// When the last request arrived: background work (search indexing, workflow runs, webhook deliveries, imports) steps
// aside while requests flow.
export function createActivityMonitor() {
  let last = 0;
  return {
    noteRequest() {
      last = Date.now();
    },
    /** Milliseconds since the last request. */
    sinceLastRequest: () => Date.now() - last,
  };
}

export type ActivityMonitor = ReturnType<typeof createActivityMonitor>;
