import { Lexer, type Tokens } from 'marked';

/**
 * The shell examples of a markdown page, as the doctests run them (test/docs/doctests.test.ts).
 *
 * A fenced ```sh or ```bash block is an example. An HTML comment right before it,
 * `<!-- doctest: skip (why) -->`, marks one that cannot run on a test machine (it needs AWS, starts
 * a second service, ...); `<!-- doctest: skip page (why) -->` anywhere marks every block of the
 * page so, and `<!-- doctest: after docs/other.md -->` says the page continues another one (its
 * blocks run first, on the same service). In a block, a comment line right after a command shows
 * what the command prints; comment lines after it that start with `#  ` (two spaces) continue it.
 * `…` (or `...`) in it stands for any text; a remark after three spaces in parentheses is not
 * output, and a line whose remark says "yours differs" shows an example value, not compared.
 */

export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** Why the block does not run, when it does not. */
  skip?: string;
  /** What the block prints, in order: each a fragment of its output (with `…` for any text). */
  outputs: string[];
}

export interface DocPage {
  blocks: DocBlock[];
  /** Pages whose blocks run first, on the same service. */
  after: string[];
}

const ANNOTATION = /<!--\s*doctest:\s*(.*?)\s*-->/g;

export function parseDocPage(markdown: string): DocPage {
  const blocks: DocBlock[] = [];
  const after: string[] = [];
  let pageSkip: string | undefined;
  for (const match of markdown.matchAll(ANNOTATION)) {
    const [, directive] = match;
    const afterMatch = /^after\s+(\S+)$/.exec(directive);
    if (afterMatch) after.push(afterMatch[1]);
    const pageMatch = /^skip page\s*\((.+)\)$/.exec(directive);
    if (pageMatch) pageSkip = pageMatch[1];
    if (!afterMatch && !pageMatch && !/^skip\s*\(.+\)$/.test(directive)) throw new Error(`unknown doctest annotation: ${match[0]}`);
  }
  let line = 1;
  let pendingSkip: string | undefined;
  for (const token of new Lexer().lex(markdown)) {
    if (token.type === 'html') {
      const skip = /<!--\s*doctest:\s*skip\s*\((.+)\)\s*-->/.exec(token.raw);
      pendingSkip = skip ? skip[1] : undefined;
    } else if (token.type === 'code' && /^(sh|bash)$/.test((token as Tokens.Code).lang ?? '')) {
      const code = (token as Tokens.Code).text;
      blocks.push({ line, code, skip: pageSkip ?? pendingSkip, outputs: outputsOf(code) });
      pendingSkip = undefined;
    } else if (token.type !== 'space') {
      pendingSkip = undefined;
    }
    line += token.raw.split('\n').length - 1;
  }
  return { blocks, after };
}

/** The output comments of a block (see above), in order. */
export function outputsOf(code: string): string[] {
  const outputs: string[] = [];
  const lines = code.split('\n');
  let inOutput = false;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i];
    const previous = i > 0 ? lines[i - 1].trim() : '';
    const isComment = text.startsWith('#');
    const startsOutput = isComment && previous !== '' && !previous.startsWith('#') && !previous.endsWith('\\');
    if (startsOutput || (inOutput && text.startsWith('#  '))) {
      inOutput = true;
      const output = withoutRemark(text.slice(1).trim());
      if (output !== undefined && output !== '') outputs.push(output);
    } else {
      inOutput = false;
    }
  }
  return outputs;
}

function withoutRemark(output: string): string | undefined {
  const remark = /\s{3,}\((.*)\)$/.exec(output);
  if (!remark) return output;
  if (/yours differs/.test(remark[1])) return undefined;
  return output.slice(0, remark.index);
}

/** Whether `expected` fragments occur in `actual` in order (`…`/`...` match any text); the first that does not, else undefined. */
export function firstMissingOutput(actual: string, expected: string[]): string | undefined {
  let from = 0;
  for (const fragment of expected) {
    const pattern = fragment
      .split(/…|\.\.\./)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[\\s\\S]*?');
    const match = new RegExp(pattern, 'g');
    match.lastIndex = from;
    const found = match.exec(actual);
    if (!found) return fragment;
    from = found.index + found[0].length;
  }
  return undefined;
}
