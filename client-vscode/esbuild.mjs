// Bundles the extension and vscode-languageclient into one file, so the .vsix holds no node_modules.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  sourcemap: false,
  minify: process.argv.includes('--minify'),
  logLevel: 'warning',
});
