import { BUTTON_ACTIONS, FORM_ACTIONS, FormValues } from './holding-actions.js';
import { byId, messageOf } from './page-helpers.js';

/**
 * The holdings pages' script (`/w/<ws>/schedules`, `variables`, `resources`, `routes`, `folders`,
 * `groups`, `members`; console/holding-page.ts renders them): each form and button names its
 * action in `data-api` (holding-actions.ts), which calls the API through the typed client with the
 * session cookie. After a call the page reloads to show the lists as the server renders them now,
 * with what the API answered in its status line; a refusal is shown as the API says it and changes
 * nothing. Bundled by bin/build.js (console-assets/holdings-page.js).
 */

const message = byId('message');
const DONE_KEY = 'svc-done';

byId('done').textContent = sessionStorage.getItem(DONE_KEY) ?? '';
sessionStorage.removeItem(DONE_KEY);

const isFormAction = (name: string): name is keyof typeof FORM_ACTIONS => Object.hasOwn(FORM_ACTIONS, name);
const isButtonAction = (name: string): name is keyof typeof BUTTON_ACTIONS => Object.hasOwn(BUTTON_ACTIONS, name);

/** Makes the call; on success keeps what it did for the reloaded page, on a refusal says why. */
async function act(call: () => Promise<string>): Promise<void> {
  message.textContent = '';
  let done: string;
  try {
    done = await call();
  } catch (error) {
    message.textContent = messageOf(error);
    return;
  }
  sessionStorage.setItem(DONE_KEY, `Done: ${done}.`);
  location.reload();
}

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-api]')) {
  const action = form.dataset.api ?? '';
  if (!isFormAction(action)) throw new Error(`the page names an unknown form action ${action}`);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let values: FormValues;
    try {
      values = new FormValues(form);
    } catch (error) {
      message.textContent = messageOf(error);
      return;
    }
    void act(() => FORM_ACTIONS[action](values, form.dataset.target ?? ''));
  });
}

// A destructive button asks first: its first press arms it ("Confirm: ..."), the second acts; no
// dialog, so it works the same with the keyboard. Leaving it disarms it.
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-api]')) {
  const action = button.dataset.api ?? '';
  if (!isButtonAction(action)) throw new Error(`the page names an unknown button action ${action}`);
  const text = button.textContent ?? '';
  button.addEventListener('click', () => {
    if (button.dataset.confirm === 'true' && button.dataset.armed !== 'true') {
      button.dataset.armed = 'true';
      button.textContent = 'Confirm: ' + text;
      return;
    }
    void act(() => BUTTON_ACTIONS[action](button.dataset.target ?? '', button.dataset.value ?? ''));
  });
  button.addEventListener('blur', () => {
    button.dataset.armed = 'false';
    button.textContent = text;
  });
}
