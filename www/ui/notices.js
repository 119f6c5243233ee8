// The error banner and the notice line at the top of the page.
import { el } from './dom.js';

export function showError(message) {
  el.errorMessage.textContent = message;
  el.error.hidden = false;
  // the box is at the top of the page: bring it into view wherever the user is
  el.error.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
}

export function showNotice(text) {
  el.noticeText.textContent = text;
  el.notice.hidden = false;
  el.reloadDemo.hidden = true;
}

export function hideError() {
  el.error.hidden = true;
  el.errorMessage.textContent = '';
}


export function hideNotice() {
  el.notice.hidden = true;
}
