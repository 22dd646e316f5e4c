/**
 * What the flow editor starts from and adds, shared by the page (flow-editor-page.ts renders the
 * new flow's YAML and the kinds to add) and its script (browser/flow-graph-editing.ts makes the
 * steps): plain data, no import, so the browser bundle carries it as it is.
 */

/** What a new flow starts from: one inline step fed by the flow's input, and that input's schema. */
export const NEW_FLOW = {
  summary: '',
  description: '',
  value: {
    modules: [
      {
        id: 'greet',
        value: {
          type: 'rawscript',
          language: 'bun',
          content: 'export async function main(name: string) {\n  return `hello ${name}`;\n}\n',
          input_transforms: { name: { type: 'javascript', expr: 'flow_input.name' } },
        },
      },
    ],
  },
  schema: { type: 'object', properties: { name: { type: 'string', default: 'world' } }, required: [] },
};

/** The steps the graph adds, each as a new module without its id (the page gives it a free one). */
export const STEP_TEMPLATES: Record<string, { label: string; id: string; step: Record<string, unknown> }> = {
  bun: { label: 'Inline TypeScript', id: 'step', step: { value: { type: 'rawscript', language: 'bun', content: 'export async function main() {\n  return "done";\n}\n', input_transforms: {} } } },
  python3: { label: 'Inline Python', id: 'step', step: { value: { type: 'rawscript', language: 'python3', content: 'def main():\n    return "done"\n', input_transforms: {} } } },
  script: { label: 'Script by path', id: 'call', step: { value: { type: 'script', path: 'f/folder/script', input_transforms: {} } } },
  approval: {
    label: 'Approval step',
    id: 'approval',
    step: { value: { type: 'rawscript', language: 'bun', content: 'export async function main() {\n  return { requested: true };\n}\n', input_transforms: {} }, suspend: { required_events: 1, timeout: 86400 } },
  },
  consentgate: { label: 'ConsentGate', id: 'gate', step: { value: { type: 'consentgate', approvers: ['role:admin'], message: 'Approve {{ workflow.name }}?' } } },
  branchone: { label: 'Branch (first match)', id: 'branch', step: { value: { type: 'branchone', branches: [{ summary: '', expr: 'false', modules: [] }], default: [] } } },
  branchall: { label: 'Branches (all)', id: 'branches', step: { value: { type: 'branchall', branches: [{ modules: [] }, { modules: [] }], parallel: true } } },
  forloopflow: { label: 'For loop', id: 'loop', step: { value: { type: 'forloopflow', iterator: { type: 'javascript', expr: '[1, 2, 3]' }, modules: [], skip_failures: false, parallel: false } } },
};
