// A cap on open HTTP connections, in all and per remote address, so one client cannot hold every
// file descriptor. A connection over the cap is answered 503 with Retry-After on its first request
// (or closed after a moment if it sends none) and never reaches the daemon's handler.

import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a refused connection may take to send a request line before it is closed, ms. */
const REFUSED_GRACE_MS = 1000;

export interface ConnectionLimits {
  max: number;
  maxPerAddress: number;
}

export class ConnectionLimiter {
  readonly #limits: ConnectionLimits;
  readonly #byAddress = new Map<string, number>();
  readonly #refused = new WeakSet<Socket>();
  #open = 0;
  #refusedTotal = 0;

  constructor(limits: ConnectionLimits) {
    this.#limits = limits;
  }

  get open(): number {
    return this.#open;
  }

  get refusedTotal(): number {
    return this.#refusedTotal;
  }

  /** Counts every connection of `server`; marks those over a cap. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? 'unknown';
      const fromAddress = this.#byAddress.get(address) ?? 0;
      if (this.#open >= this.#limits.max || fromAddress >= this.#limits.maxPerAddress) {
        this.#refusedTotal++;
        this.#refused.add(socket);
        // Idle keep-alive connections are the cheapest to give back: close them to make room.
        server.closeIdleConnections();
        const timer = setTimeout(() => socket.destroy(), REFUSED_GRACE_MS);
        timer.unref();
        socket.once('close', () => clearTimeout(timer));
        return;
      }
      this.#open++;
      this.#byAddress.set(address, fromAddress + 1);
      socket.once('close', () => {
        this.#open--;
        const left = (this.#byAddress.get(address) ?? 1) - 1;
        if (left <= 0) this.#byAddress.delete(address);
        else this.#byAddress.set(address, left);
      });
    });
  }

  /** Whether `socket` came in over a cap (its request must be refused). */
  isRefused(socket: Socket): boolean {
    return this.#refused.has(socket);
  }

  /** The refusal's text, naming the limit to raise. */
  refusalMessage(socket: Socket): string {
    const address = socket.remoteAddress ?? 'unknown';
    return (this.#byAddress.get(address) ?? 0) >= this.#limits.maxPerAddress
      ? `too many open connections from ${address} (server.maxConnectionsPerAddress = ${this.#limits.maxPerAddress}); close idle connections or retry later`
      : `too many open connections (server.maxConnections = ${this.#limits.max}); retry later`;
  }
}
