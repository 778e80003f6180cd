// The patterns of the `tools` and `net` permissions: `github.*`-style tool names and
// `*.example.com:8443`-style hosts. Matching only; the decision is access.ts's.

const MAX_CACHED_PATTERNS = 1000;
const patternCache = new Map<string, RegExp>();

/** Whether `serverTool` (`server.tool`) matches `pattern`, where `*` stands for any run of characters. */
export function toolPatternMatches(pattern: string, serverTool: string): boolean {
  let re = patternCache.get(pattern);
  if (re === undefined) {
    const body = pattern.split('*').map((part) => part.replace(/[\\^$.+?()[\]{}|/]/g, '\\$&')).join('.*');
    re = new RegExp(`^${body}$`, 's');
    if (patternCache.size >= MAX_CACHED_PATTERNS) patternCache.clear();
    patternCache.set(pattern, re);
  }
  return re.test(serverTool);
}

/** Whether `server.tool` matches one of the `tools` patterns. */
export function toolAllowed(patterns: readonly string[], server: string, tool: string): boolean {
  const target = `${server}.${tool}`;
  return patterns.some((pattern) => pattern === '*' || toolPatternMatches(pattern, target));
}

/**
 * Whether `host` (and `port`) is allowed by the `net` patterns: `example.com`, `*.example.com`
 * (subdomains, not the apex), `example.com:8443`, or `*`.
 */
export function hostAllowed(patterns: readonly string[], host: string, port: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return patterns.some((raw) => {
    const pattern = raw.toLowerCase();
    if (pattern === '*') return true;
    const [pHost = '', pPort] = splitHostPort(pattern);
    if (pPort !== undefined && pPort !== port) return false;
    if (pHost.startsWith('*.')) return h.endsWith(pHost.slice(1)) && h.length > pHost.length - 1;
    return h === pHost;
  });
}

function splitHostPort(pattern: string): [string, string | undefined] {
  if (pattern.startsWith('[')) {
    const end = pattern.indexOf(']');
    const rest = pattern.slice(end + 1);
    return [pattern.slice(1, end), rest.startsWith(':') ? rest.slice(1) : undefined];
  }
  const colon = pattern.lastIndexOf(':');
  if (colon > 0 && pattern.indexOf(':') === colon) return [pattern.slice(0, colon), pattern.slice(colon + 1)];
  return [pattern, undefined];
}
