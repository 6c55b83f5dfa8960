// The project's root folder, found the same way whether the code runs from its sources (tsx) or bundled into dist/server.mjs,
// so files shipped beside the code (migrations, the Python harness, the plugin SDK, the built web app) are found in both.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'src', 'project-root.ts'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`table-service: cannot find the project folder above ${from}`);
  }
}

export const PROJECT_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path inside the project, from its root. */
export const projectPath = (...parts: string[]) => path.join(PROJECT_ROOT, ...parts);
