/**
 * The webhook section's "Copy as curl" buttons (webhook-urls.ts renders them on an item's page and
 * in both editors): each copies the `pre` just before it. Part of each of those pages' bundles.
 */
export function wireCopyButtons(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('button.copy')) {
    button.addEventListener('click', () => {
      const text = button.previousElementSibling?.textContent ?? '';
      // A refusal (no clipboard permission) is not reported: the text stays on the page to copy by hand.
      void navigator.clipboard
        .writeText(text)
        .catch(() => {})
        .then(() => (button.textContent = 'Copied'));
    });
  }
}
