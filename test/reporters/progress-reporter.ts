// A reporter for runs nobody watches on a TTY (CI, `npm test | tee`): it names each file as it
// starts and ends, and every HEARTBEAT_MS names the files still running, so a long suite never
// goes silent for minutes. On a TTY, vitest's own live summary already does this.
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';

const HEARTBEAT_MS = 20_000;

export default class ProgressReporter implements Reporter {
  readonly #running = new Map<string, number>();
  readonly #quiet = process.stdout.isTTY === true;
  #done = 0;
  #total = 0;
  #started = 0;
  #heartbeat: NodeJS.Timeout | undefined;

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.#started = Date.now();
    this.#total = specifications.length;
    if (this.#quiet) return;
    this.#heartbeat = setInterval(() => this.#beat(), HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  onTestModuleStart(module: TestModule): void {
    this.#running.set(module.relativeModuleId, Date.now());
    this.#write(`▶ ${module.relativeModuleId}`);
  }

  onTestModuleEnd(module: TestModule): void {
    const since = this.#running.get(module.relativeModuleId) ?? Date.now();
    this.#running.delete(module.relativeModuleId);
    this.#done += 1;
    const tests = [...module.children.allTests()];
    const failed = tests.filter((t) => t.result().state === 'failed').length;
    const verdict = failed > 0 || !module.ok() ? `✗ ${failed} failed of ${tests.length}` : `✓ ${tests.length} tests`;
    this.#write(`${verdict} ${module.relativeModuleId} in ${seconds(Date.now() - since)} [${this.#done}/${Math.max(this.#total, this.#done)} files]`);
  }

  onTestRunEnd(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  #beat(): void {
    if (this.#running.size === 0) return;
    const now = Date.now();
    const files = [...this.#running].map(([file, since]) => `${file} (${seconds(now - since)})`).join(', ');
    this.#write(`… ${seconds(now - this.#started)} elapsed, running: ${files}`);
  }

  #write(line: string): void {
    if (this.#quiet) return;
    process.stdout.write(`[progress] ${line}\n`);
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
