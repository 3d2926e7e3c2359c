import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The dashboard's single-page app, served by the service at /dashboard/ (api/dashboard-web.ts). Hashed asset
 * names under /dashboard/assets/ (cached a year, immutable); index.html is served for every other page path.
 * No inline script or style: the page's CSP is `script-src 'self'; style-src 'self'`.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // An inlined asset would be a data: URL; the CSP allows data: for images only, so nothing is inlined.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
