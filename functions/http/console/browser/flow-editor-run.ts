import { encodePath } from './console-api.js';
import { flowEditorCalls } from './flow-editor-calls.js';
import { byId, el, messageOf, readSchemaForm, schemaFollower, showJson } from './page-helpers.js';
import { getAt, isObj, type FlowEditorPage } from './flow-editor-context.js';

/**
 * The flow editor's save and run forms (part of the page's bundle): a save is a new version (a
 * create for a new flow); a test run runs the flow in the editor, or its selected step alone,
 * unsaved; "Run the saved version" runs the latest version. The run form follows the flow's
 * schema. The API is called through flow-editor-calls.ts (console-api.ts, typed by its views).
 */

const workspaceHref = () => '/w/' + encodeURIComponent(document.body.dataset.workspace ?? '');

/** The YAML as it is must parse before it is saved or test-run (the graph's flow is its last good reading). */
function assertParses(page: FlowEditorPage): void {
  if (!page.lib) throw new Error('the editor could not load');
  const parsed = page.lib.parse(page.yaml.text());
  if (parsed.error) throw new Error('the YAML does not parse: ' + parsed.error.message);
}

// A save is a new version of the flow (a create for a new one).
async function save(page: FlowEditorPage): Promise<void> {
  assertParses(page);
  const path = byId<HTMLInputElement>('path').value.trim();
  const body: Record<string, unknown> = { ...page.current, path };
  const note = byId<HTMLInputElement>('deployment-message').value.trim();
  if (note) body.deployment_message = note;
  const version = await flowEditorCalls.save(document.body.dataset.mode === 'new', path, body);
  location.assign(workspaceHref() + '/flows/edit/' + encodePath(path) + '?saved=' + encodeURIComponent(version));
}

export function wireSaveForm(page: FlowEditorPage): void {
  byId('save-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const message = byId('save-message');
    message.replaceChildren();
    const button = byId<HTMLButtonElement>('save');
    button.disabled = true;
    save(page)
      .catch((e: unknown) => {
        message.append(el('p', { text: 'Not saved: ' + messageOf(e) }));
        page.check();
      })
      .finally(() => (button.disabled = false));
  });
}

function setStatus(status: string): void {
  const badge = byId('run-status');
  badge.className = 'status s-' + status;
  badge.textContent = status.replace('_', ' ');
}

// The run form follows the flow's schema, keeping the values typed so far.
const followRunSchema = schemaFollower('run-fields');
export function followSchema(page: FlowEditorPage): void {
  followRunSchema(page.current.schema);
}

/** What a press of one of the run form's buttons runs. */
type RunChoice = 'preview' | 'step' | 'saved';

async function startRun(page: FlowEditorPage, choice: RunChoice, step: unknown, args: Record<string, unknown>): Promise<void> {
  const message = byId('run-message');
  if (!page.lib) throw new Error('the editor could not load');
  const path = byId<HTMLInputElement>('path').value.trim();
  if (choice !== 'saved') assertParses(page);
  // One step: a flow of that step alone (its settings kept), run like the whole flow's test.
  const id = await flowEditorCalls.start({ saved: choice === 'saved', path, value: choice === 'step' ? { modules: [step] } : page.current.value, schema: page.current.schema, args });
  byId('run-link').replaceChildren(el('a', { href: workspaceHref() + '/run/' + encodeURIComponent(id), text: 'run page' }));
  setStatus('queued');
  // Until it ends or waits for a person: the run page follows it from there.
  const end = await flowEditorCalls.follow(id, setStatus);
  if (end.waiting) message.textContent = 'The run waits for an approval: decide on its run page or in the approvals inbox.';
  else showJson(byId('run-result'), end.result);
}

export function wireRunForm(page: FlowEditorPage): void {
  const form = byId<HTMLFormElement>('run-form');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
    const choice: RunChoice = submitter?.value === 'saved' ? 'saved' : submitter?.value === 'step' ? 'step' : 'preview';
    const message = byId('run-message');
    message.textContent = '';
    let args: Record<string, unknown>;
    try {
      args = readSchemaForm(byId('run-fields'));
    } catch (e) {
      message.textContent = messageOf(e);
      return;
    }
    const step = choice === 'step' && page.selected ? getAt(page, page.selected) : null;
    if (choice === 'step' && !isObj(step)) {
      message.textContent = 'Select a step in the graph first.';
      return;
    }
    const buttons = [...form.querySelectorAll('button')];
    buttons.forEach((b) => (b.disabled = true));
    byId('run-result').replaceChildren();
    byId('run-link').replaceChildren();
    startRun(page, choice, step, args)
      .catch((e: unknown) => (message.textContent = messageOf(e)))
      .finally(() => buttons.forEach((b) => (b.disabled = false)));
  });
}
