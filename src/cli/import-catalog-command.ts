// `import-catalog FILE`: converts the seed's full_catalog.json into catalog/CATEGORY/TOOL.json
// files (plus _category.json descriptions), each written atomically (a temp file renamed in), so
// a running daemon's hot reload never sees half a file.

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseSeedCatalog } from '../catalog/seed-format.js';
import type { ParsedCommand } from './args.js';
import { UsageError } from './args.js';
import type { CliIo } from './cli-io.js';
import { EXIT_OK, commandConfig, write } from './cli-io.js';

export async function importCatalogCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (parsed.positionals.length !== 1) {
    throw new UsageError(`import-catalog takes one FILE (the seed's full_catalog.json); got ${parsed.positionals.length}`, 'import-catalog');
  }
  const file = path.resolve(io.cwd, parsed.positionals[0] as string);
  const config = commandConfig(parsed, io, (c) => (c.logLevel = 'warn'));
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new UsageError(`cannot read ${parsed.positionals[0]}: ${reason}`, 'import-catalog');
  }
  const seed = parseSeedCatalog(text);
  if (!seed.ok) throw new UsageError(`${parsed.positionals[0]}: ${seed.reason}`, 'import-catalog');

  const dir = config.catalogDir;
  let tools = 0;
  let descriptionOnly = 0;
  for (const category of seed.value.categories) {
    const folder = path.join(dir, category.name);
    await mkdir(folder, { recursive: true });
    if (category.description) await writeAtomic(path.join(folder, '_category.json'), { description: category.description });
    for (const tool of category.tools) {
      await writeAtomic(path.join(folder, `${tool.name}.json`), tool);
      tools++;
      if (tool['input_schema'] === undefined) descriptionOnly++;
    }
  }
  const summary = {
    catalog_dir: dir,
    categories: seed.value.categories.length,
    tools,
    description_only: descriptionOnly,
    skipped: seed.value.skipped,
  };
  await write(io.stdout, `${JSON.stringify(summary, null, 2)}\n`);
  return EXIT_OK;
}

async function writeAtomic(target: string, data: unknown): Promise<void> {
  // A dot name: the catalog watcher ignores it until the rename makes it a catalog file.
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, `${JSON.stringify(data, null, 2)}\n`);
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
