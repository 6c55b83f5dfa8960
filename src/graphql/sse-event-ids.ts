// Gives each SSE message of an event subscription an `id:` line with the event's seq, so a browser's EventSource (or any
// SSE client) reconnects with `Last-Event-ID` and resumes where it stopped; yoga writes no ids of its own.
const FIELDS = ['tableEvents', 'baseEvents'];

export function withEventIds(response: Response): Response {
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const ids = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      // yoga enqueues each `data: ...\n\n` line as one chunk; an event's id may stand anywhere in its message.
      const text = decoder.decode(chunk);
      if (text.startsWith('data: {')) {
        try {
          const data = JSON.parse(text.slice(6)).data as Record<string, { seq?: unknown } | null> | undefined;
          const seq = FIELDS.map((f) => data?.[f]?.seq).find((s) => typeof s === 'string');
          if (seq) controller.enqueue(encoder.encode(`id: ${seq}\n`));
        } catch {
          /* not one whole JSON message: pass it on as it is */
        }
      }
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(ids), { status: response.status, statusText: response.statusText, headers: response.headers });
}
