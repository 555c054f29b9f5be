//! Finding secrets inside strings: URL passwords, secret query and fragment parameters, and
//! `name=value` pairs of connection strings and form bodies.

use super::*;

/// `text` with every secret span replaced by [`MARKER`]; `None` when it has none.
pub(super) fn redact_text(text: &str) -> Option<String> {
    let mut spans = secret_spans(text);
    spans.retain(|&(start, end)| start < end);
    if spans.is_empty() {
        return None;
    }
    spans.sort_unstable();
    // Spans found by different scans may overlap: hide their union once.
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut shown = String::with_capacity(text.len());
    let mut done = 0;
    for (start, end) in merged {
        shown.push_str(&text[done..start]);
        shown.push_str(MARKER);
        done = end;
    }
    shown.push_str(&text[done..]);
    Some(shown)
}

/// Byte ranges of the secrets in `text`, unmerged, possibly empty or overlapping. Every bound
/// is next to an ASCII byte, so slicing `text` with them is safe.
pub(super) fn secret_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    url_spans(text, &mut spans);
    pair_spans(text, &mut spans);
    spans
}

/// Ends a URL: whitespace, and characters that delimit URLs in prose or markup.
fn ends_url(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<' | b'>' | b'`')
}

/// The userinfo and the secret query and fragment parameters of every `scheme://` URL.
fn url_spans(text: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let sep = from + found;
        from = sep + 3;
        let scheme_ok = sep > 0 && (bytes[sep - 1].is_ascii_alphanumeric() || matches!(bytes[sep - 1], b'+' | b'-' | b'.'));
        if !scheme_ok {
            continue;
        }
        let auth_start = sep + 3;
        let auth_end = bytes[auth_start..]
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#') || ends_url(b))
            .map_or(bytes.len(), |p| auth_start + p);
        // The last `@` ends the userinfo (as WHATWG parsers do), so an unencoded `@` in a
        // password is hidden with the rest of it.
        if let Some(at) = text[auth_start..auth_end].rfind('@') {
            let userinfo = &text[auth_start..auth_start + at];
            match userinfo.find(':') {
                Some(colon) => spans.push((auth_start + colon + 1, auth_start + at)),
                None => spans.push((auth_start, auth_start + at)),
            }
        }
        let end = bytes[auth_end..].iter().position(|&b| ends_url(b)).map_or(bytes.len(), |p| auth_end + p);
        let rest = &text[auth_end..end];
        if let Some(q) = rest.find(['?', '#']) {
            param_spans(text, auth_end + q + 1, end, spans);
        }
    }
}

/// Secret `name=value` parameters of a query and fragment, `&`- or `;`-separated, in
/// `text[start..end]` (a `#` starts the fragment, whose parameters are read the same way).
fn param_spans(text: &str, start: usize, end: usize, spans: &mut Vec<(usize, usize)>) {
    let mut piece_start = start;
    for (i, b) in text.as_bytes()[start..end].iter().enumerate().map(|(i, &b)| (start + i, b)).chain(std::iter::once((end, b'&'))) {
        if !matches!(b, b'&' | b';' | b'#') {
            continue;
        }
        let piece = &text[piece_start..i];
        if let Some(eq) = piece.find('=') {
            if is_secret_param(&piece[..eq]) {
                spans.push((piece_start + eq + 1, i));
            }
        }
        piece_start = i + 1;
    }
}

/// Secret `name=value` pairs anywhere in `text`. With a `;` in `text` (outside a quoted
/// value) it is read as a connection string: pairs end at `;` or a line break, and values may
/// hold spaces (`Password=my pass;`). Otherwise pairs end at `&` or whitespace (libpq DSNs,
/// form bodies, `--password=…`). The name is the run of letters, digits, `_`, `-` and `.`
/// just before the pair's first `=`; a value in quotes (`password='a b;c'`) ends at the
/// closing quote and is hidden without them.
fn pair_spans(text: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let connection_string = has_unquoted_semicolon(bytes);
    let ends_pair = |b: u8| if connection_string { matches!(b, b';' | b'\n' | b'\r') } else { b == b'&' || b.is_ascii_whitespace() };
    let mut i = 0;
    while i < bytes.len() {
        let seg_start = i;
        let mut eq = None;
        let mut quoted = None;
        while i < bytes.len() && !ends_pair(bytes[i]) {
            if bytes[i] == b'=' && eq.is_none() {
                eq = Some(i);
                let quote = bytes.get(i + 1).copied().filter(|&q| q == b'"' || q == b'\'');
                if let Some(q) = quote {
                    if let Some(close) = bytes[i + 2..].iter().position(|&b| b == q) {
                        quoted = Some((i + 2, i + 2 + close));
                        i = i + 2 + close;
                    }
                }
            }
            i += 1;
        }
        if let Some(eq) = eq {
            let name_start = bytes[seg_start..eq]
                .iter()
                .rposition(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
                .map_or(seg_start, |p| seg_start + p + 1);
            if name_start < eq && is_secret_key(&text[name_start..eq]) {
                let (start, end) = quoted.unwrap_or_else(|| trim_span(bytes, eq + 1, i));
                spans.push((start, end));
            }
        }
        i += 1;
    }
}

/// Whether `bytes` holds a `;` that is not inside a quoted value (`='…'` or `="…"`).
fn has_unquoted_semicolon(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b';' => return true,
            b'=' => {
                if let Some(&q) = bytes.get(i + 1).filter(|&&q| q == b'"' || q == b'\'') {
                    if let Some(close) = bytes[i + 2..].iter().position(|&b| b == q) {
                        i = i + 2 + close;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// `start..end` without the ASCII whitespace at both ends.
fn trim_span(bytes: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && bytes[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    (start, end)
}
