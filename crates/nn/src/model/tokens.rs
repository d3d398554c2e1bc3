//! The token stream of KataGo's model format: whitespace-separated text tokens, and float
//! blocks that are either whitespace-separated text (`.txt` models) or `@BIN@` followed by
//! little-endian `f32`s (`.bin` models).
//!
//! Every read checks the bytes that remain before allocating, so a hostile count can never
//! make the reader allocate more than the input's own size.

use super::error::ModelError;

/// Longest token (name, number) the reader accepts; real files use a few dozen bytes.
pub(crate) const MAX_TOKEN_LEN: usize = 1024;

/// How many bytes KataGo lets precede the `@` that opens a binary float block.
const MAX_BYTES_BEFORE_BIN_MARKER: usize = 100;

/// How float blocks are encoded; fixed by the first float block of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatMode {
    /// `@BIN@` followed by little-endian `f32`s.
    Binary,
    /// Whitespace-separated decimal text.
    Text,
}

/// A read position in the decompressed model bytes.
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    mode: Option<FloatMode>,
}

/// C's `isspace` in the "C" locale, which is what `istream >>` skips.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// A printable, bounded rendering of input bytes for error messages.
pub(crate) fn shorten(bytes: &[u8]) -> String {
    const MAX: usize = 40;
    let s = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX)]).into_owned();
    if bytes.len() > MAX {
        format!("{s}...")
    } else {
        s
    }
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Cursor {
            data,
            pos: 0,
            mode: None,
        }
    }

    /// Current byte offset.
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    /// The float encoding, once the first float block has been seen.
    #[cfg(test)]
    pub(crate) fn float_mode(&self) -> Option<FloatMode> {
        self.mode
    }

    fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if !is_space(b) {
                break;
            }
            self.pos += 1;
        }
    }

    /// The next whitespace-delimited token and its offset.
    pub(crate) fn token(
        &mut self,
        ctx: &str,
        what: &'static str,
    ) -> Result<(&'a [u8], usize), ModelError> {
        self.skip_space();
        let start = self.pos;
        let data = self.data;
        while let Some(&b) = data.get(self.pos) {
            if is_space(b) {
                break;
            }
            self.pos += 1;
            if self.pos - start > MAX_TOKEN_LEN {
                return Err(ModelError::OutOfRange {
                    context: ctx.to_string(),
                    field: what,
                    value: format!("token of more than {MAX_TOKEN_LEN} bytes"),
                    reason: "tokens are short names or numbers".to_string(),
                    offset: start,
                });
            }
        }
        if self.pos == start {
            return Err(ModelError::UnexpectedEof {
                context: ctx.to_string(),
                what,
                offset: start,
            });
        }
        Ok((data.get(start..self.pos).unwrap_or_default(), start))
    }

    /// The next token as a layer or model name.
    pub(crate) fn name(&mut self, ctx: &str, what: &'static str) -> Result<String, ModelError> {
        let (tok, _) = self.token(ctx, what)?;
        Ok(String::from_utf8_lossy(tok).into_owned())
    }

    /// The next token as an integer (what `istream >> int` reads from a well-formed file).
    pub(crate) fn int(
        &mut self,
        ctx: &str,
        field: &'static str,
    ) -> Result<(i64, usize), ModelError> {
        let (tok, offset) = self.token(ctx, field)?;
        let parsed = std::str::from_utf8(tok)
            .ok()
            .and_then(|s| s.parse::<i64>().ok());
        match parsed {
            Some(v) => Ok((v, offset)),
            None => Err(ModelError::Syntax {
                context: ctx.to_string(),
                expected: "an integer",
                found: shorten(tok),
                offset,
            }),
        }
    }

    /// An integer that must lie in `min..=max`.
    pub(crate) fn int_in(
        &mut self,
        ctx: &str,
        field: &'static str,
        min: i64,
        max: i64,
    ) -> Result<i64, ModelError> {
        let (v, offset) = self.int(ctx, field)?;
        if v < min || v > max {
            return Err(ModelError::OutOfRange {
                context: ctx.to_string(),
                field,
                value: v.to_string(),
                reason: format!("must be in {min}..={max}"),
                offset,
            });
        }
        Ok(v)
    }

    /// A count in `1..=max`, as a `usize`.
    pub(crate) fn count(
        &mut self,
        ctx: &str,
        field: &'static str,
        max: usize,
    ) -> Result<usize, ModelError> {
        let max_i = i64::try_from(max).unwrap_or(i64::MAX);
        let v = self.int_in(ctx, field, 1, max_i)?;
        Ok(usize::try_from(v).unwrap_or(0))
    }

    /// A `0`/`1` flag (what `istream >> bool` accepts).
    pub(crate) fn flag(&mut self, ctx: &str, field: &'static str) -> Result<bool, ModelError> {
        Ok(self.int_in(ctx, field, 0, 1)? == 1)
    }

    /// A finite decimal number written as a text token (epsilons, multipliers, RoPE theta).
    pub(crate) fn number(
        &mut self,
        ctx: &str,
        field: &'static str,
    ) -> Result<(f64, usize), ModelError> {
        let (tok, offset) = self.token(ctx, field)?;
        let parsed = std::str::from_utf8(tok)
            .ok()
            .and_then(|s| s.parse::<f64>().ok());
        match parsed {
            Some(v) if v.is_finite() => Ok((v, offset)),
            Some(v) => Err(ModelError::OutOfRange {
                context: ctx.to_string(),
                field,
                value: v.to_string(),
                reason: "must be finite".to_string(),
                offset,
            }),
            None => Err(ModelError::Syntax {
                context: ctx.to_string(),
                expected: "a number",
                found: shorten(tok),
                offset,
            }),
        }
    }

    /// A block of `count` finite floats, in whichever encoding the file uses.
    pub(crate) fn floats(&mut self, ctx: &str, count: u64) -> Result<Vec<f32>, ModelError> {
        self.skip_space();
        let mode = match self.mode {
            Some(m) => m,
            None => {
                // The first float block decides: binary files always open it with `@BIN@`.
                let m = if self.data.get(self.pos) == Some(&b'@') {
                    FloatMode::Binary
                } else {
                    FloatMode::Text
                };
                self.mode = Some(m);
                m
            }
        };
        match mode {
            FloatMode::Binary => self.binary_floats(ctx, count),
            FloatMode::Text => self.text_floats(ctx, count),
        }
    }

    fn truncated(&self, ctx: &str, count: u64) -> ModelError {
        ModelError::TruncatedWeights {
            context: ctx.to_string(),
            count,
            remaining: self.remaining(),
            offset: self.pos,
        }
    }

    fn binary_floats(&mut self, ctx: &str, count: u64) -> Result<Vec<f32>, ModelError> {
        let marker_search_start = self.pos;
        loop {
            match self.data.get(self.pos) {
                Some(b'@') => break,
                Some(_) if self.pos - marker_search_start < MAX_BYTES_BEFORE_BIN_MARKER => {
                    self.pos += 1
                }
                Some(_) => {
                    return Err(ModelError::Syntax {
                        context: ctx.to_string(),
                        expected: "a binary float block (@BIN@)",
                        found: shorten(
                            self.data
                                .get(marker_search_start..self.pos)
                                .unwrap_or_default(),
                        ),
                        offset: marker_search_start,
                    })
                }
                None => {
                    return Err(ModelError::UnexpectedEof {
                        context: ctx.to_string(),
                        what: "a binary float block",
                        offset: self.pos,
                    })
                }
            }
        }
        let marker_at = self.pos;
        let marker = self.data.get(marker_at..marker_at + 5);
        if marker != Some(b"@BIN@".as_slice()) {
            return Err(ModelError::Syntax {
                context: ctx.to_string(),
                expected: "@BIN@",
                found: shorten(
                    self.data
                        .get(marker_at..(marker_at + 5).min(self.data.len()))
                        .unwrap_or_default(),
                ),
                offset: marker_at,
            });
        }
        self.pos += 5;
        let byte_len = count
            .checked_mul(4)
            .ok_or_else(|| self.truncated(ctx, count))?;
        let byte_len = usize::try_from(byte_len).map_err(|_| self.truncated(ctx, count))?;
        if byte_len > self.remaining() {
            return Err(self.truncated(ctx, count));
        }
        let start = self.pos;
        let bytes = self.data.get(start..start + byte_len).unwrap_or_default();
        let mut out = Vec::with_capacity(byte_len / 4);
        for (i, chunk) in bytes.chunks_exact(4).enumerate() {
            // `chunks_exact(4)` only yields 4-byte chunks, so the conversion cannot fail.
            let v = f32::from_le_bytes(chunk.try_into().unwrap_or([0; 4]));
            if !v.is_finite() {
                return Err(ModelError::NonFiniteWeight {
                    context: ctx.to_string(),
                    offset: start + 4 * i,
                });
            }
            out.push(v);
        }
        self.pos += byte_len;
        Ok(out)
    }

    fn text_floats(&mut self, ctx: &str, count: u64) -> Result<Vec<f32>, ModelError> {
        // Each value takes at least one byte plus a separator.
        let needed = count.saturating_mul(2).saturating_sub(1);
        if needed > self.remaining() as u64 {
            return Err(self.truncated(ctx, count));
        }
        let n = usize::try_from(count).map_err(|_| self.truncated(ctx, count))?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let (tok, offset) = self.token(ctx, "a float weight")?;
            let v = std::str::from_utf8(tok)
                .ok()
                .and_then(|s| s.parse::<f32>().ok())
                .ok_or_else(|| ModelError::Syntax {
                    context: ctx.to_string(),
                    expected: "a float weight",
                    found: shorten(tok),
                    offset,
                })?;
            if !v.is_finite() {
                return Err(ModelError::NonFiniteWeight {
                    context: ctx.to_string(),
                    offset,
                });
            }
            out.push(v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_ints_and_numbers() {
        let mut c = Cursor::new(b"  name\n12 -3\t1e-05 abc");
        assert_eq!(c.name("t", "name").ok().as_deref(), Some("name"));
        assert_eq!(c.int("t", "a").ok().map(|v| v.0), Some(12));
        assert_eq!(c.int("t", "b").ok().map(|v| v.0), Some(-3));
        assert_eq!(c.number("t", "eps").ok().map(|v| v.0), Some(1e-5));
        assert!(matches!(c.int("t", "c"), Err(ModelError::Syntax { .. })));
        assert!(matches!(
            c.int("t", "d"),
            Err(ModelError::UnexpectedEof { .. })
        ));
    }

    #[test]
    fn binary_and_text_floats() {
        let mut bin = b"x\n@BIN@".to_vec();
        bin.extend_from_slice(&1.5f32.to_le_bytes());
        bin.extend_from_slice(&(-2.0f32).to_le_bytes());
        let mut c = Cursor::new(&bin);
        assert!(c.name("t", "n").is_ok());
        assert_eq!(c.floats("t", 2).ok(), Some(vec![1.5, -2.0]));
        assert_eq!(c.float_mode(), Some(FloatMode::Binary));

        let mut c = Cursor::new(b"0.5 -1 2e3");
        assert_eq!(c.floats("t", 3).ok(), Some(vec![0.5, -1.0, 2000.0]));
        assert_eq!(c.float_mode(), Some(FloatMode::Text));
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        let mut c = Cursor::new(b"@BIN@abcd");
        assert!(matches!(
            c.floats("t", 1 << 40),
            Err(ModelError::TruncatedWeights { .. })
        ));
        let mut c = Cursor::new(b"1 2 3");
        assert!(matches!(
            c.floats("t", u64::MAX),
            Err(ModelError::TruncatedWeights { .. })
        ));
    }

    #[test]
    fn non_finite_rejected() {
        let mut bin = b"@BIN@".to_vec();
        bin.extend_from_slice(&f32::NAN.to_le_bytes());
        assert!(matches!(
            Cursor::new(&bin).floats("t", 1),
            Err(ModelError::NonFiniteWeight { offset: 5, .. })
        ));
        assert!(matches!(
            Cursor::new(b"inf").floats("t", 1),
            Err(ModelError::NonFiniteWeight { .. })
        ));
    }
}
