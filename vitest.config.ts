// vitest settings: separate processes (native SQLite), generous timeouts for argon2 and real servers.
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // One copy of graphql for every importer: vitest would otherwise load both its ESM and CJS builds.
  resolve: { alias: { graphql: require.resolve('graphql') } },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
