//! SGF text to node trees and back.

use super::tree::NodeData;
use super::*;

/// Parses an SGF collection: one or more game trees, with whitespace around them.
pub fn parse(text: &str) -> Result<Vec<GameTree>, SgfError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: if text.starts_with('\u{feff}') { 3 } else { 0 },
    };
    let mut trees = Vec::new();
    loop {
        p.skip_ws();
        match p.peek() {
            None => break,
            Some(b'(') => trees.push(p.game_tree()?),
            Some(_) => return Err(p.err(p.pos, SgfErrorKind::ExpectedGameTree(p.char_at(p.pos)))),
        }
    }
    if trees.is_empty() {
        return Err(p.err(p.pos, SgfErrorKind::NoGameTree));
    }
    Ok(trees)
}

/// Writes game trees as an SGF collection, escaping `]` and `\` in values.
pub fn write(trees: &[GameTree]) -> String {
    let mut out = String::new();
    for t in trees {
        t.write_into(&mut out);
        out.push('\n');
    }
    out
}

pub(super) fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        if c == ']' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// The character starting at `pos`, for messages.
    fn char_at(&self, pos: usize) -> char {
        self.text
            .get(pos..)
            .and_then(|s| s.chars().next())
            .unwrap_or(char::REPLACEMENT_CHARACTER)
    }

    fn err(&self, offset: usize, kind: SgfErrorKind) -> SgfError {
        SgfError { offset, kind }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b) if b.is_ascii_whitespace() || b == 0x0b) {
            self.pos += 1;
        }
    }

    /// One game tree, `self.pos` at its `(`. Nested trees are tracked on an explicit
    /// stack of open parentheses, each remembering the node its variation hangs from.
    fn game_tree(&mut self) -> Result<GameTree, SgfError> {
        struct Open {
            offset: usize,
            parent: Option<usize>,
        }
        let mut nodes: Vec<NodeData> = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        // Last node of the sequence being read; variations hang from it.
        let mut current: Option<usize> = None;
        let unclosed = |open: &[Open]| SgfError {
            offset: open.last().map_or(0, |o| o.offset),
            kind: SgfErrorKind::UnclosedGameTree,
        };
        loop {
            // At a `(`: a sequence of at least one node must follow.
            open.push(Open {
                offset: self.pos,
                parent: current,
            });
            self.pos += 1;
            self.skip_ws();
            match self.peek() {
                Some(b';') => {}
                Some(_) => {
                    return Err(
                        self.err(self.pos, SgfErrorKind::ExpectedNode(self.char_at(self.pos)))
                    )
                }
                None => return Err(unclosed(&open)),
            }
            while self.peek() == Some(b';') {
                let mut node = self.node()?;
                let idx = nodes.len();
                if let Some(parent) = current {
                    node.parent = Some(NodeId(parent));
                    if let Some(p) = nodes.get_mut(parent) {
                        p.children.push(NodeId(idx));
                    }
                }
                nodes.push(node);
                current = Some(idx);
            }
            // Then variations, and the closing `)`.
            loop {
                self.skip_ws();
                match self.peek() {
                    Some(b'(') => break,
                    Some(b')') => {
                        self.pos += 1;
                        if let Some(done) = open.pop() {
                            current = done.parent;
                        }
                        if open.is_empty() {
                            return Ok(GameTree { nodes });
                        }
                    }
                    Some(b';') => return Err(self.err(self.pos, SgfErrorKind::NodeAfterVariation)),
                    Some(_) => {
                        return Err(self.err(
                            self.pos,
                            SgfErrorKind::UnexpectedChar(self.char_at(self.pos)),
                        ))
                    }
                    None => return Err(unclosed(&open)),
                }
            }
        }
    }

    /// One node, `self.pos` at its `;`; stops at the first byte that starts no property.
    fn node(&mut self) -> Result<NodeData, SgfError> {
        let offset = self.pos;
        self.pos += 1;
        let mut props = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b) if b.is_ascii_alphabetic() => props.push(self.property()?),
                Some(b'[') => return Err(self.err(self.pos, SgfErrorKind::MissingIdentifier)),
                _ => {
                    return Ok(NodeData {
                        props,
                        children: Vec::new(),
                        parent: None,
                        offset: Some(offset),
                    })
                }
            }
        }
    }

    fn property(&mut self) -> Result<Property, SgfError> {
        let start = self.pos;
        // FF[3] spelled identifiers with lowercase letters (`AddBlack`): keep the capitals.
        let mut id = String::new();
        while let Some(b) = self.peek().filter(u8::is_ascii_alphabetic) {
            if b.is_ascii_uppercase() {
                id.push(char::from(b));
            }
            self.pos += 1;
        }
        let raw = self
            .text
            .get(start..self.pos)
            .unwrap_or_default()
            .to_string();
        self.skip_ws();
        if self.peek() != Some(b'[') {
            return Err(self.err(self.pos, SgfErrorKind::ExpectedValue(raw)));
        }
        if id.is_empty() {
            return Err(self.err(start, SgfErrorKind::EmptyIdentifier(raw)));
        }
        let mut values = Vec::new();
        while self.peek() == Some(b'[') {
            values.push(self.value()?);
            self.skip_ws();
        }
        Ok(Property { id, values })
    }

    /// One value, `self.pos` at its `[`: `\` escapes the next character, and `\`
    /// before a line break (`\n`, `\r`, `\r\n` or `\n\r`) removes both.
    fn value(&mut self) -> Result<String, SgfError> {
        let open = self.pos;
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let rest = self.bytes.get(self.pos..).unwrap_or_default();
            let Some(k) = rest.iter().position(|&b| b == b']' || b == b'\\') else {
                return Err(self.err(open, SgfErrorKind::UnclosedValue));
            };
            out.extend_from_slice(rest.get(..k).unwrap_or_default());
            self.pos += k;
            if self.peek() == Some(b']') {
                self.pos += 1;
                break;
            }
            // A backslash: look at what it escapes.
            self.pos += 1;
            match self.peek() {
                None => return Err(self.err(open, SgfErrorKind::UnclosedValue)),
                Some(c @ (b'\n' | b'\r')) => {
                    self.pos += 1;
                    if matches!(self.peek(), Some(d @ (b'\n' | b'\r')) if d != c) {
                        self.pos += 1;
                    }
                }
                Some(c) => {
                    // Only ASCII bytes are special, so copying byte by byte keeps UTF-8 intact.
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}
