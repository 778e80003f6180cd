// Guest-realm facades of the web classes guests expect (URL, URLSearchParams, TextEncoder,
// TextDecoder). Node's own classes hand out Node-internal objects (the URLSearchParams iterator
// prototype, the prototypes of Node's internal errors, util.inspect through URL's error messages)
// that are mutable and shared by every call on a worker. These facades keep Node's parsing (the
// behaviour users expect) in private fields and hand the guest only primitives, fresh arrays of
// intrinsics, and intrinsic errors carrying the message: nothing of Node's realm is reachable.
// The classes are hardened once per worker (realm.ts); instances are made by the call that uses them.

import { requireArgs, webString, wrapHostErrors } from './brand.js';
import { makeError } from '../kit/call-scope.js';

const HostURL = globalThis.URL;
const HostURLSearchParams = globalThis.URLSearchParams;

export { guestError, wrapHostErrors } from './brand.js';
export { TextDecoder, TextEncoder } from './web-encoding.js';

const text = webString;

/** Pairs from what URLSearchParams accepts: a string, another instance, pairs, or a record (as Node reads them). */
function pairsOf(init: unknown): string | [string, string][] {
  if (init === undefined || init === null) return '';
  if (typeof init !== 'object' && typeof init !== 'function') return text(init);
  const own = realPairs(init);
  if (own) return own;
  const iterator = (init as { [Symbol.iterator]?: unknown })[Symbol.iterator];
  if (iterator !== undefined && iterator !== null) {
    if (typeof iterator !== 'function') throw makeError('TypeError', 'URLSearchParams: the query\'s Symbol.iterator must be a function');
    const pairs: [string, string][] = [];
    for (const pair of init as Iterable<unknown>) {
      if ((typeof pair !== 'object' && typeof pair !== 'function') || pair === null || typeof (pair as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function') {
        throw makeError('TypeError', 'Each query pair must be an iterable [name, value] tuple');
      }
      const items = Array.from(pair as Iterable<unknown>);
      if (items.length !== 2) throw makeError('TypeError', 'Each query pair must be an iterable [name, value] tuple');
      pairs.push([text(items[0]), text(items[1])]);
    }
    return pairs;
  }
  const pairs: [string, string][] = [];
  for (const key of Reflect.ownKeys(init)) {
    const d = Reflect.getOwnPropertyDescriptor(init, key);
    if (d === undefined || !d.enumerable) continue;
    pairs.push([text(key), text((init as Record<PropertyKey, unknown>)[key])]);
  }
  return pairs;
}

/** A real instance's pairs (subclasses too), read from its private state; undefined for anything else. */
let realPairs: (value: object) => [string, string][] | undefined = () => undefined;

/** Marks the internal constructor call that binds a facade to URL's own (live) host params. */
const LINK: object = Object.freeze(Object.create(null) as object);

export class URLSearchParams {
  #params: globalThis.URLSearchParams;

  static {
    realPairs = (value) => (#params in value ? (value as URLSearchParams).#pairs() : undefined);
  }

  constructor(init?: unknown, link?: unknown) {
    if (link === LINK && init instanceof HostURLSearchParams) {
      this.#params = init;
      return;
    }
    const source = pairsOf(init);
    this.#params = wrapHostErrors(() => new HostURLSearchParams(source));
  }

  get size(): number {
    return this.#params.size;
  }

  append(name: unknown, value: unknown): void {
    requireArgs(arguments.length, 2, 'URLSearchParams.append(name, value)');
    wrapHostErrors(() => this.#params.append(text(name), text(value)));
  }

  delete(name: unknown, value?: unknown): void {
    requireArgs(arguments.length, 1, 'URLSearchParams.delete(name)');
    wrapHostErrors(() => (value === undefined ? this.#params.delete(text(name)) : this.#params.delete(text(name), text(value))));
  }

  get(name: unknown): string | null {
    requireArgs(arguments.length, 1, 'URLSearchParams.get(name)');
    return wrapHostErrors(() => this.#params.get(text(name)));
  }

  getAll(name: unknown): string[] {
    requireArgs(arguments.length, 1, 'URLSearchParams.getAll(name)');
    return wrapHostErrors(() => [...this.#params.getAll(text(name))]);
  }

  has(name: unknown, value?: unknown): boolean {
    requireArgs(arguments.length, 1, 'URLSearchParams.has(name)');
    return wrapHostErrors(() => (value === undefined ? this.#params.has(text(name)) : this.#params.has(text(name), text(value))));
  }

  set(name: unknown, value: unknown): void {
    requireArgs(arguments.length, 2, 'URLSearchParams.set(name, value)');
    wrapHostErrors(() => this.#params.set(text(name), text(value)));
  }

  sort(): void {
    this.#params.sort();
  }

  toString(): string {
    return this.#params.toString();
  }

  forEach(callback: unknown, thisArg?: unknown): void {
    requireArgs(arguments.length, 1, 'URLSearchParams.forEach(callback)');
    if (typeof callback !== 'function') throw makeError('TypeError', 'URLSearchParams.forEach needs a function');
    for (const [k, v] of this.#pairs()) (callback as (v: string, k: string, p: URLSearchParams) => void).call(thisArg, v, k, this);
  }

  /** Iterators over a snapshot, of the intrinsic Array Iterator kind (frozen by lockdown). */
  entries(): IterableIterator<[string, string]> {
    return this.#pairs()[Symbol.iterator]();
  }

  keys(): IterableIterator<string> {
    return this.#pairs().map(([k]) => k)[Symbol.iterator]();
  }

  values(): IterableIterator<string> {
    return this.#pairs().map(([, v]) => v)[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  #pairs(): [string, string][] {
    const out: [string, string][] = [];
    this.#params.forEach((v, k) => out.push([k, v]));
    return out;
  }
}

export class URL {
  #url: globalThis.URL;
  #params: URLSearchParams | undefined;

  constructor(input: unknown, base?: unknown) {
    requireArgs(arguments.length, 1, 'new URL(url)');
    const href = text(input);
    const against = base === undefined ? undefined : text(base);
    this.#url = wrapHostErrors(() => (against === undefined ? new HostURL(href) : new HostURL(href, against)));
  }

  static canParse(input: unknown, base?: unknown): boolean {
    requireArgs(arguments.length, 1, 'URL.canParse(url)');
    try {
      const href = text(input);
      const against = base === undefined ? undefined : text(base);
      if (against === undefined) new HostURL(href);
      else new HostURL(href, against);
      return true;
    } catch {
      return false;
    }
  }

  get href(): string {
    return this.#url.href;
  }
  set href(v: unknown) {
    const next = text(v);
    wrapHostErrors(() => {
      this.#url.href = next;
    });
  }
  get origin(): string {
    return this.#url.origin;
  }
  get protocol(): string {
    return this.#url.protocol;
  }
  set protocol(v: unknown) {
    this.#url.protocol = text(v);
  }
  get username(): string {
    return this.#url.username;
  }
  set username(v: unknown) {
    this.#url.username = text(v);
  }
  get password(): string {
    return this.#url.password;
  }
  set password(v: unknown) {
    this.#url.password = text(v);
  }
  get host(): string {
    return this.#url.host;
  }
  set host(v: unknown) {
    this.#url.host = text(v);
  }
  get hostname(): string {
    return this.#url.hostname;
  }
  set hostname(v: unknown) {
    this.#url.hostname = text(v);
  }
  get port(): string {
    return this.#url.port;
  }
  set port(v: unknown) {
    this.#url.port = text(v);
  }
  get pathname(): string {
    return this.#url.pathname;
  }
  set pathname(v: unknown) {
    this.#url.pathname = text(v);
  }
  get search(): string {
    return this.#url.search;
  }
  set search(v: unknown) {
    this.#url.search = text(v);
  }
  get hash(): string {
    return this.#url.hash;
  }
  set hash(v: unknown) {
    this.#url.hash = text(v);
  }
  /** The same facade every time, live: changing it changes the URL's query, as on the platform. */
  get searchParams(): URLSearchParams {
    this.#params ??= new (URLSearchParams as new (host: unknown, link: unknown) => URLSearchParams)(this.#url.searchParams, LINK);
    return this.#params;
  }
  toString(): string {
    return this.#url.href;
  }
  toJSON(): string {
    return this.#url.href;
  }
}

/**
 * As web IDL lays classes out: members enumerable, a read-only Symbol.toStringTag naming the class
 * (`Object.prototype.toString` says `[object URL]`). Runs once, before realm.ts hardens the classes.
 */
function webLayout(cls: { prototype: object }, tag: string): void {
  for (const key of Object.getOwnPropertyNames(cls.prototype)) {
    if (key === 'constructor') continue;
    Object.defineProperty(cls.prototype, key, { enumerable: true });
  }
  Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: tag, writable: false, enumerable: false, configurable: true });
}

webLayout(URL, 'URL');
webLayout(URLSearchParams, 'URLSearchParams');
// The platform's iterator is `entries` itself.
Object.defineProperty(URLSearchParams.prototype, Symbol.iterator, { value: URLSearchParams.prototype.entries, writable: true, enumerable: false, configurable: true });
