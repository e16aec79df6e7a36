/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The app loads the built files from ui/dist (tauri.conf.json: frontendDist).
export default defineConfig({
  root: import.meta.dirname,
  plugins: [svelte()],
  clearScreen: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'safari15',
    sourcemap: false,
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.ts'],
  },
});
