// Guest-realm facades of the web classes guests expect (URL, URLSearchParams, TextEncoder,
// TextDecoder). Node's own classes hand out Node-internal objects (the URLSearchParams iterator
// prototype, the prototypes of Node's internal errors, util.inspect through URL's error messages)
// that are mutable and shared by every call on a worker. These facades keep Node's parsing (the
// behaviour users expect) in private fields and hand the guest only primitives, fresh arrays of
// intrinsics, and intrinsic errors carrying the message: nothing of Node's realm is reachable.
// The classes are hardened once per worker (realm.ts); instances are made by the call that uses them.

import { makeError } from './call-scope.js';

const HostURL = globalThis.URL;
const HostURLSearchParams = globalThis.URLSearchParams;
const HostTextEncoder = globalThis.TextEncoder;
const HostTextDecoder = globalThis.TextDecoder;

/** Runs host code; a host error (Node's internal classes, DOMException) becomes an intrinsic one. */
export function wrapHostErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw guestError(err);
  }
}

/** An intrinsic error with the host error's name and message only (never its prototype or code). */
export function guestError(err: unknown): Error {
  let name = 'Error';
  let message = 'host operation failed';
  try {
    const e = err as { name?: unknown; message?: unknown };
    if (typeof e?.name === 'string') name = e.name;
    if (typeof e?.message === 'string') message = e.message;
  } catch {
    // a getter that throws: keep the defaults
  }
  return makeError(name, message);
}

/** Strings as the web platform converts them (a guest object's own toString runs, in the guest's terms). */
function text(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

/** Pairs from what URLSearchParams accepts: a string, another instance, pairs, or a record. */
function pairsOf(init: unknown): string | [string, string][] {
  if (init === undefined || init === null) return '';
  if (init instanceof URLSearchParams) return init.toString();
  if (typeof init !== 'object' && typeof init !== 'function') return text(init);
  const iterator = (init as { [Symbol.iterator]?: unknown })[Symbol.iterator];
  if (typeof iterator === 'function') {
    const pairs: [string, string][] = [];
    for (const pair of init as Iterable<unknown>) {
      const items = Array.from(pair as Iterable<unknown>);
      if (items.length !== 2) throw makeError('TypeError', 'Each query pair must be an iterable [name, value] tuple');
      pairs.push([text(items[0]), text(items[1])]);
    }
    return pairs;
  }
  return Object.keys(init).map((k) => [k, text((init as Record<string, unknown>)[k])] as [string, string]);
}

/** Marks the internal constructor call that binds a facade to URL's own (live) host params. */
const LINK: object = Object.freeze(Object.create(null) as object);

export class URLSearchParams {
  #params: globalThis.URLSearchParams;

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
    wrapHostErrors(() => this.#params.append(text(name), text(value)));
  }

  delete(name: unknown, value?: unknown): void {
    wrapHostErrors(() => (value === undefined ? this.#params.delete(text(name)) : this.#params.delete(text(name), text(value))));
  }

  get(name: unknown): string | null {
    return wrapHostErrors(() => this.#params.get(text(name)));
  }

  getAll(name: unknown): string[] {
    return wrapHostErrors(() => [...this.#params.getAll(text(name))]);
  }

  has(name: unknown, value?: unknown): boolean {
    return wrapHostErrors(() => (value === undefined ? this.#params.has(text(name)) : this.#params.has(text(name), text(value))));
  }

  set(name: unknown, value: unknown): void {
    wrapHostErrors(() => this.#params.set(text(name), text(value)));
  }

  sort(): void {
    this.#params.sort();
  }

  toString(): string {
    return this.#params.toString();
  }

  forEach(callback: unknown, thisArg?: unknown): void {
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
    const href = text(input);
    const against = base === undefined ? undefined : text(base);
    this.#url = wrapHostErrors(() => (against === undefined ? new HostURL(href) : new HostURL(href, against)));
  }

  static canParse(input: unknown, base?: unknown): boolean {
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

const encoder = new HostTextEncoder();

export class TextEncoder {
  get encoding(): string {
    return 'utf-8';
  }

  /** A fresh Uint8Array: its prototype is the intrinsic one, frozen by lockdown. */
  encode(input: unknown = ''): Uint8Array {
    return encoder.encode(text(input));
  }

  encodeInto(source: unknown, destination: unknown): { read: number; written: number } {
    if (!(destination instanceof Uint8Array)) throw makeError('TypeError', 'TextEncoder.encodeInto needs a Uint8Array destination');
    const r = encoder.encodeInto(text(source), destination);
    return { read: r.read, written: r.written };
  }
}

export class TextDecoder {
  #decoder: InstanceType<typeof HostTextDecoder>;

  constructor(label: unknown = 'utf-8', options?: unknown) {
    const o = (options ?? {}) as { fatal?: unknown; ignoreBOM?: unknown };
    const settings = { fatal: Boolean(o.fatal), ignoreBOM: Boolean(o.ignoreBOM) };
    const name = text(label);
    this.#decoder = wrapHostErrors(() => new HostTextDecoder(name, settings));
  }

  get encoding(): string {
    return this.#decoder.encoding;
  }
  get fatal(): boolean {
    return this.#decoder.fatal;
  }
  get ignoreBOM(): boolean {
    return this.#decoder.ignoreBOM;
  }

  decode(input?: unknown, options?: unknown): string {
    const stream = Boolean((options as { stream?: unknown } | undefined)?.stream);
    if (input !== undefined && !ArrayBuffer.isView(input) && !(input instanceof ArrayBuffer)) {
      throw makeError('TypeError', 'TextDecoder.decode needs an ArrayBuffer, a typed array or a DataView');
    }
    return wrapHostErrors(() => this.#decoder.decode(input as Uint8Array | undefined, { stream }));
  }
}
