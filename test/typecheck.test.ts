// The type check as part of the test run (CI runs `npm test`): the server and tests (`tsc --noEmit`) and the web app
// (`vue-tsc --noEmit -p web`, templates included) must have no type error; a failure shows the compiler's output.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './server-process.js';

const require = createRequire(import.meta.url);
const TIMEOUT = 5 * 60_000;

function bin(pkg: string, rel: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), rel);
}

function run(script: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('type check', () => {
  it('tsc --noEmit (server, schema, adapters, tests) has no error', async () => {
    const r = await run(bin('typescript', 'bin/tsc'), ['--noEmit', '-p', 'tsconfig.json']);
    expect(r.code, `tsc --noEmit failed:\n${r.output}`).toBe(0);
  }, TIMEOUT);

  it('vue-tsc --noEmit -p web (the web app, templates included) has no error', async () => {
    const r = await run(bin('vue-tsc', 'bin/vue-tsc.js'), ['--noEmit', '-p', 'web']);
    expect(r.code, `vue-tsc --noEmit -p web failed:\n${r.output}`).toBe(0);
  }, TIMEOUT);
});
