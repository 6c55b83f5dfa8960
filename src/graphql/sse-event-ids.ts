// Gives each SSE message of an event subscription an `id:` line with the event's seq, so a browser's EventSource (or any
// SSE client) reconnects with `Last-Event-ID` and resumes where it stopped; yoga writes no ids of its own.
const FIELDS = ['tableEvents', 'baseEvents'];

export function withEventIds(response: Response): Response {
  // The content type first: reading `body` would turn a string answer into a stream the server must then pipe.
  if (!response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) return response;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const ids = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      // yoga writes a message as `event: next\n` then `data: <json>\n\n`; an id line may stand anywhere in the message.
      const text = decoder.decode(chunk, { stream: true });
      if (!text.includes('data: {')) {
        controller.enqueue(chunk);
        return;
      }
      const out = text.split('\n').map((line) => {
        if (!line.startsWith('data: {')) return line;
        try {
          const data = JSON.parse(line.slice(6)).data as Record<string, { seq?: unknown } | null> | undefined;
          const seq = FIELDS.map((f) => data?.[f]?.seq).find((v) => typeof v === 'string');
          return seq ? `id: ${seq}\n${line}` : line;
        } catch {
          return line; // not one whole JSON line: passed on as it is
        }
      });
      controller.enqueue(encoder.encode(out.join('\n')));
    },
  });
  return new Response(response.body.pipeThrough(ids), { status: response.status, statusText: response.statusText, headers: response.headers });
}
