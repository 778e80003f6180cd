// SIGINT/SIGTERM: the first one starts a graceful stop; a second one while stopping exits at once.

export const EXIT_FORCED = 130;

/** Resolves with the name of the first SIGINT/SIGTERM; a second signal exits the process. */
export function nextStopSignal(onForced: () => void = () => process.exit(EXIT_FORCED)): { signal: Promise<NodeJS.Signals>; dispose(): void } {
  let first = true;
  let resolveSignal: (s: NodeJS.Signals) => void = () => undefined;
  const signal = new Promise<NodeJS.Signals>((resolve) => (resolveSignal = resolve));
  const handler = (name: NodeJS.Signals): void => {
    if (first) {
      first = false;
      resolveSignal(name);
    } else {
      onForced();
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
