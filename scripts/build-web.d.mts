/** Types of build-web.mjs for the TypeScript that imports it (test/global-setup.ts). */
export function webSourceHash(): string;
export function ensureWebBuilt(): boolean;
