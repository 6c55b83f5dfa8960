// Vite build of the web app: Vue 3 single-file components, output served by the server from web/dist.
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [vue()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 },
  server: { proxy: { '/graphql': 'http://127.0.0.1:8080', '/api': 'http://127.0.0.1:8080' } },
});
