// Helpers of the import tests: a multipart upload and waiting for a job to end.
import { expect } from 'vitest';
import type { TestClient, TestResponse } from './helpers.js';

/** POSTs `content` as the multipart `file` part (with `options` as JSON when given). */
export function importFile(c: TestClient, url: string, content: string | Uint8Array, fileName: string, options?: unknown, token?: string | null, headers?: Record<string, string>): Promise<TestResponse> {
  const form = new FormData();
  form.set('file', new Blob([content as BlobPart]), fileName);
  if (options !== undefined) form.set('options', JSON.stringify(options));
  return c.request('POST', url, { raw: form, token, headers });
}

/** Polls the job until it has ended (or `until` holds), and returns it. */
export async function waitJob(c: TestClient, jobId: string, token?: string, until: (job: any) => boolean = (j) => !['queued', 'running'].includes(j.status), timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await c.request('GET', `/api/v1/jobs/${jobId}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (until(res.body.data)) return res.body.data;
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not get there: ${JSON.stringify(res.body.data)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
