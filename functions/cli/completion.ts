import type { Command, Option } from 'commander';

/**
 * Shell completion for bash and zsh, made from the command tree itself (program.ts): the words
 * typed so far select a command, and its subcommands and flags are offered. Nothing is listed by
 * hand, so a new command or flag completes as soon as it exists.
 */

interface Node {
  path: string;
  commands: { name: string; summary: string }[];
  options: { flag: string; summary: string }[];
}

const firstLine = (text: string) => text.split('\n')[0];

function visibleOptions(cmd: Command): Option[] {
  return [...cmd.options.filter((o) => !o.hidden), ...(cmd.options.some((o) => o.long === '--help') ? [] : [{ long: '--help', description: 'show help for the command' } as Option])];
}

/** Every command of the tree with the path that reaches it (`""`, `sync`, `sync pull`, ...). */
function nodesOf(program: Command): Node[] {
  const nodes: Node[] = [];
  const walk = (cmd: Command, path: string) => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    nodes.push({
      path,
      commands: subs.map((c) => ({ name: c.name(), summary: firstLine(c.description()) })),
      options: visibleOptions(cmd).flatMap((o) => [o.long, o.short].filter((f): f is string => !!f).map((flag) => ({ flag, summary: firstLine(o.description) }))),
    });
    for (const c of subs) walk(c, path ? `${path} ${c.name()}` : c.name());
  };
  walk(program, '');
  return nodes;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function bash(program: Command): string {
  const nodes = nodesOf(program);
  const paths = nodes.filter((n) => n.path).map((n) => shellQuote(n.path));
  const cases = nodes.map((n) => `    ${shellQuote(n.path)}) words=${shellQuote([...n.commands.map((c) => c.name), ...n.options.map((o) => o.flag)].join(' '))} ;;`);
  return `# bash completion for svc (svc completion bash); load it with: source <(svc completion bash)
_svc() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" next w i words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    next="\${path:+$path }$w"
    case "$next" in
      ${paths.join('|')}) path="$next" ;;
    esac
  done
  case "$path" in
${cases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _svc svc
`;
}

function zsh(program: Command): string {
  const nodes = nodesOf(program);
  const paths = nodes.filter((n) => n.path).map((n) => shellQuote(n.path));
  const entry = (name: string, summary: string) => shellQuote(`${name.replace(/:/g, '\\:')}:${summary}`);
  const cases = nodes.map(
    (n) => `    (${shellQuote(n.path)})\n      subcommands=(${n.commands.map((c) => entry(c.name, c.summary)).join(' ')})\n      flags=(${n.options.map((o) => entry(o.flag, o.summary)).join(' ')}) ;;`,
  );
  return `#compdef svc
# zsh completion for svc (svc completion zsh): save it as _svc in a directory of $fpath, or source it
_svc() {
  local cmdpath="" next w i
  local -a subcommands flags
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    [[ $w == -* ]] && continue
    next="\${cmdpath:+$cmdpath }$w"
    case "$next" in
      (${paths.join('|')}) cmdpath="$next" ;;
    esac
  done
  case "$cmdpath" in
${cases.join('\n')}
  esac
  if [[ "\${words[CURRENT]}" == -* ]]; then
    _describe -t flags 'svc option' flags
  else
    _describe -t commands 'svc command' subcommands || _files
  fi
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _svc "$@"
else
  compdef _svc svc
fi
`;
}

export function completionScript(program: Command, shell: 'bash' | 'zsh'): string {
  return (shell === 'bash' ? bash(program) : zsh(program)).trimEnd();
}

export { nodesOf };
