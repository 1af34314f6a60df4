import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Brotli and gzip beside each asset: @fastify/static's preCompressed serves them without compressing per request. */
const precompress = (): Plugin => ({
  name: 'hogstream-precompress',
  apply: 'build',
  writeBundle(options, bundle) {
    for (const file of Object.keys(bundle)) {
      if (!/\.(js|css|svg|json)$/.test(file)) continue;
      const full = path.join(options.dir!, file);
      const raw = fs.readFileSync(full);
      fs.writeFileSync(`${full}.br`, zlib.brotliCompressSync(raw));
      fs.writeFileSync(`${full}.gz`, zlib.gzipSync(raw, { level: 9 }));
    }
  },
});

// Preact with preact/compat standing in for React, so TanStack Query's React bindings run on 10 KB
// instead of React's 60 KB (docs/DECISIONS.md, "Console libraries").
export default defineConfig({
  root: here,
  base: '/',
  publicDir: false,
  resolve: {
    alias: {
      react: 'preact/compat',
      'react-dom': 'preact/compat',
      'react/jsx-runtime': 'preact/jsx-runtime',
    },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(here, 'dist'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    reportCompressedSize: false,
    rolldownOptions: {
      // TanStack Query's "use client" lines are for React server components, meaningless in a browser bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  plugins: [precompress()],
});
