// How catalog text becomes search terms: identifiers split into words, a stop list, and a
// light suffix stemmer so 'files'/'file', 'searching'/'search', 'issues'/'issue' meet.

/** Words too common in tool descriptions to rank anything. */
const STOP_WORDS = new Set([
  'a', 'about', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'can', 'do', 'for', 'from', 'how', 'i',
  'if', 'in', 'into', 'is', 'it', 'its', 'me', 'my', 'of', 'on', 'or', 'so', 'some', 'that',
  'the', 'their', 'then', 'this', 'to', 'use', 'using', 'via', 'was', 'we', 'what', 'when',
  'which', 'with', 'you', 'your',
]);

/** Longest term kept; longer runs (base64, hashes) are noise and slow fuzzy matching. */
const MAX_TERM_CHARS = 40;

const WORD_RE = /[\p{L}\p{N}]+/gu;
const HAS_UPPER_RE = /\p{Lu}/u;
/** Punctuation around an identifier: '({ owner,' -> 'owner'. */
const EDGE_RE = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
// camelCase and digit boundaries: 'getFileInfo' -> get File Info, 'HTTPServer' -> HTTP Server.
const CAMEL_RE = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;


/** Plain words of a text, identifiers split on _ - . and camelCase. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(WORD_RE)) {
    const word = match[0];
    // Most words have no inner capital; the camelCase split is only paid for those that do.
    if (!HAS_UPPER_RE.test(word.slice(1))) words.push(word);
    else for (const part of word.split(CAMEL_RE)) if (part) words.push(part);
  }
  return words;
}

/**
 * Tokens of a name-like field: each identifier whole ('read_text_file') plus its words, so an
 * exact name query outranks a query sharing one word with it.
 */
export function tokenizeName(text: string): string[] {
  const tokens = splitWords(text);
  for (const raw of text.split(/\s+/)) {
    // Plain words are already in `tokens`; only compounds are worth the trimming.
    if (!/[_.-]/.test(raw) && !HAS_UPPER_RE.test(raw.slice(1))) continue;
    const id = raw.replace(EDGE_RE, '');
    if (/[_.-]/.test(id) || CAMEL_RE.test(id)) tokens.push(id);
  }
  return tokens;
}

/** Query tokens: words plus whole identifiers, so 'github.create_issue' finds the exact tool. */
export const tokenizeQuery = tokenizeName;

const VOWEL_RE = /[aeiouy]/;

function hasVowel(stem: string): boolean {
  return VOWEL_RE.test(stem);
}

function undouble(stem: string): string {
  const last = stem.at(-1);
  if (stem.length > 3 && last === stem.at(-2) && last !== undefined && !'lsz'.includes(last)) {
    return stem.slice(0, -1);
  }
  return stem;
}

/**
 * A light English stemmer (a small subset of Porter's steps 1 and 5): plurals, -ing, -ed and a
 * final -e. It only has to map word forms onto the same stem, on both the index and query sides.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || !/^[a-z]+$/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(?:ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);

  if (w.endsWith('ied') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('ing') && w.length > 5 && hasVowel(w.slice(0, -3))) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && !w.endsWith('eed') && w.length > 4 && hasVowel(w.slice(0, -2))) {
    w = undouble(w.slice(0, -2));
  }

  if (w.endsWith('e') && !w.endsWith('ee') && w.length > 3) w = w.slice(0, -1);
  return w;
}

/** Terms remembered by `processTerm`; a catalog's vocabulary is small and repeats endlessly. */
const TERM_MEMO_MAX = 50_000;
const termMemo = new Map<string, string | null>();

/** MiniSearch `processTerm`: lower case, drop stop words and overlong terms, stem plain words. */
export function processTerm(term: string): string | null {
  const known = termMemo.get(term);
  if (known !== undefined) return known;
  const lower = term.toLowerCase();
  const processed = lower.length === 0 || lower.length > MAX_TERM_CHARS || STOP_WORDS.has(lower) ? null : /[_.-]/.test(lower) ? lower : stem(lower);
  if (termMemo.size >= TERM_MEMO_MAX) termMemo.clear(); // bounded: a flood of unique tokens starts it over
  termMemo.set(term, processed);
  return processed;
}
