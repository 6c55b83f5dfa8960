// When the last request arrived and how many are being answered: background work (search indexing, workflow runs)
// steps aside while requests flow, and may use the gaps between them.
export function createActivityMonitor() {
  let last = 0;
  let inFlight = 0;
  const idleListeners: Array<() => void> = [];
  return {
    noteRequest() {
      last = Date.now();
      inFlight++;
    },
    /** A request noted by noteRequest has been answered. */
    noteAnswered() {
      if (--inFlight === 0) for (const listener of idleListeners) listener();
    },
    /** Milliseconds since the last request. */
    sinceLastRequest: () => Date.now() - last,
    /** Whether no request is being answered. */
    idle: () => inFlight === 0,
    /** Calls `listener` each time the last request in flight has been answered. */
    onIdle(listener: () => void) {
      idleListeners.push(listener);
    },
  };
}

export type ActivityMonitor = ReturnType<typeof createActivityMonitor>;
