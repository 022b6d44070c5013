// The text of a PDF the learner dropped, for course generation, read in the browser by Mozilla's
// pdf.js (npm pdfjs-dist, pinned in package.json). Loaded only when a PDF is dropped: index.html's
// `window.aulaPdfText` imports this module on first use, never on page load. Every file it needs
// sits beside it under /pdf/ (copied by Trunk), so nothing is fetched from another origin.
//
// It is pdf.js's legacy build, which runs in browsers a few years old; Trunk copies it, its
// worker and its CJK character maps (cmaps/) into dist/pdf/. The service worker leaves /pdf/
// alone: it only serves writing a course, which needs the network anyway. The hook
// `window.aulaPdfText(bytes, maxChars)` resolves to `{ text, pages, truncated }` or rejects with
// an Error with a learner-facing message and a `code` ("not-pdf", "damaged", "password",
// "no-text", "unreadable") for the app to pick its own text by (the home page shows the message
// today). Tested by tests/e2e/pdf-text.test.mjs.
import { getDocument, GlobalWorkerOptions } from "./pdf.min.mjs";

// pdf.js parses in its own worker; the file is served from the same folder as this module.
GlobalWorkerOptions.workerSrc = new URL("./pdf.worker.min.mjs", import.meta.url).href;

/** An Error a learner can act on; `code` lets the app choose its own translated text. */
class PdfTextError extends Error {
  constructor(code, message, cause) {
    super(message, cause ? { cause } : undefined);
    this.name = "PdfTextError";
    this.code = code;
  }
}
const pdfError = (code, message, cause) => new PdfTextError(code, message, cause);

const NOT_PDF = "This file is not a PDF. Choose a .pdf file, or paste the text instead.";
const DAMAGED = "This PDF is damaged and cannot be read. Save it again from the program that made it, or paste the text instead.";
const PASSWORD = "This PDF is protected by a password. Save a copy without the password (or print it to a new PDF) and try again, or paste the text instead.";
const NO_TEXT = "This PDF has no text layer (it may be a scan). Paste the text instead.";

/** A private copy of the bytes: pdf.js hands its input to the worker, which detaches it. */
function copyBytes(bytes) {
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes.slice(0));
  if (ArrayBuffer.isView(bytes)) {
    return new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }
  throw new TypeError("extractPdfText: bytes must be an ArrayBuffer or a Uint8Array");
}

/** True when "%PDF-" starts within the first 1 KB (readers accept a little junk before it). */
function looksLikePdf(data) {
  const head = data.subarray(0, 1024);
  for (let i = 0; i + 5 <= head.length; i++) {
    if (head[i] === 0x25 && head[i + 1] === 0x50 && head[i + 2] === 0x44 && head[i + 3] === 0x46 && head[i + 4] === 0x2d) {
      return true;
    }
  }
  return false;
}

/** One page's text: items joined by spaces, `hasEOL` as a newline, whitespace collapsed. */
function pageText(items) {
  let raw = "";
  for (const item of items) {
    if (typeof item.str !== "string") continue; // marked-content markers carry no text
    raw += item.str + (item.hasEOL ? "\n" : " ");
  }
  return raw
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ")
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter((line) => line !== "")
    .join("\n");
}

/** `text` cut to at most `max` UTF-16 units, never through a surrogate pair. */
function cut(text, max) {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/**
 * Extracts the text of every page, in order: `{ text, pages, truncated }`.
 * `text`: pages separated by a blank line, lines by "\n", runs of whitespace collapsed; at most
 * `maxChars` characters (UTF-16 units), `truncated` true when more was there. `pages`: the PDF's
 * page count. Rejects with an Error whose message a learner can act on (and a `code`: "not-pdf",
 * "damaged", "password", "no-text" or "unreadable") for a file that is not a PDF, a damaged one,
 * one that needs a password, or one without a text layer (a scan).
 * @param {ArrayBuffer | Uint8Array} bytes
 * @param {number} maxChars
 */
export async function extractPdfText(bytes, maxChars) {
  if (typeof maxChars !== "number" || Number.isNaN(maxChars) || maxChars < 0) {
    throw new TypeError("extractPdfText: maxChars must be a number of characters, 0 or more");
  }
  const data = copyBytes(bytes);
  if (!looksLikePdf(data)) throw pdfError("not-pdf", NOT_PDF);

  const task = getDocument({
    data,
    // Predefined CJK character maps, fetched from /pdf/cmaps/ only by PDFs that name one.
    cMapUrl: new URL("./cmaps/", import.meta.url).href,
    cMapPacked: true,
    enableXfa: false,
    verbosity: 0, // errors only: pdf.js reports recoverable oddities of a file as console warnings
  });
  try {
    let doc;
    try {
      doc = await task.promise;
    } catch (error) {
      if (error?.name === "PasswordException") throw pdfError("password", PASSWORD, error);
      if (error?.name === "InvalidPDFException") throw pdfError("damaged", DAMAGED, error);
      throw error;
    }
    const texts = [];
    let length = 0;
    let truncated = false;
    for (let number = 1; number <= doc.numPages; number++) {
      const page = await doc.getPage(number);
      const text = pageText((await page.getTextContent()).items);
      page.cleanup();
      if (text === "") continue;
      texts.push(text);
      length += text.length + 2;
      if (length - 2 > maxChars) {
        truncated = true;
        break; // the rest would be cut anyway
      }
    }
    const all = texts.join("\n\n");
    if (all === "") throw pdfError("no-text", NO_TEXT);
    return { text: cut(all, maxChars), pages: doc.numPages, truncated: truncated || all.length > maxChars };
  } catch (error) {
    if (error instanceof PdfTextError) throw error;
    throw pdfError("unreadable", `This PDF could not be read (${error?.message ?? error}). Paste the text instead.`, error);
  } finally {
    await task.destroy().catch(() => {});
  }
}
