//! SGF FF\[4\] game records.
//!
//! Two layers:
//! - Syntax: [`parse`] reads a whole collection into [`GameTree`]s of nodes whose
//!   properties keep their order and their unescaped values; [`write()`] writes them back.
//!   Every node and variation is kept; the main line is the first child at every node.
//! - Go: [`load`] replays a game tree's main line as a [`Game`] ([`SgfGame`]), and
//!   [`save`] writes a [`Game`] as a game record that [`load`] reads back unchanged.
//!
//! Error offsets are byte offsets into the text given to [`parse`] or [`load`]. Nothing
//! here recurses over the tree (it is stored flat), so arbitrarily deep variations or
//! long games cannot overflow the stack.
//!
//! How [`load`] reads a record:
//! - `GM` must be absent or 1; `SZ` is `19` or `columns:rows` (default 19x19).
//! - `RU` goes through [`rules_from_name`]; when it is absent, or not understood (a
//!   [`SgfWarning::UnknownRules`]), the rules are KataGo's default, Tromp-Taylor.
//!   `KM`, when present and valid, replaces the rules' komi.
//! - The root's `AB`/`AW`/`AE` (point lists may be compressed, `aa:cc`) form the
//!   initial position. The first player is `PL`, else the colour of the first move,
//!   else White when the setup is Black stones only and `HA` is at least 2, else Black.
//! - `B`/`W` along the main line are played with [`Game::play_tolerant`], since records
//!   come from many rule sets. Setup in a later main-line node restarts the game from
//!   the position reached with those stones added: the turns before it are dropped
//!   (a [`SgfWarning::SetupRestart`]). `PL` outside setup nodes is ignored.
//! - `RE` is kept as text; a resignation (`B+R`, `W+Resign`) is also recorded in the
//!   game when the moves did not end it. Scores are recomputed by the replay.

use std::fmt;

use crate::board::{Board, IllegalMove, SetupError};
use crate::game::{Game, GameOptions};
use crate::geometry::{BoardSize, CoordError, Loc, Move};
use crate::player::Player;
use crate::rules::{komi_is_valid, Rules};

// ---------------------------------------------------------------------------
// Errors

/// A malformed SGF text, or a Go record that cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {kind}")]
pub struct SgfError {
    /// Byte offset into the input where the problem was found (for Go errors, the failing node's `;`).
    pub offset: usize,
    /// What went wrong.
    pub kind: SgfErrorKind,
}

/// The kinds of [`SgfError`]; node numbers count along the main line, the root being 0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SgfErrorKind {
    /// The input holds no game tree at all.
    #[error("no game tree in the input")]
    NoGameTree,
    /// Something other than `(` where a game tree should start.
    #[error("expected `(` to start a game tree, found {0:?}")]
    ExpectedGameTree(char),
    /// A game tree that does not start with a node.
    #[error("expected `;` to start a node, found {0:?}")]
    ExpectedNode(char),
    /// A game tree (opened at the offset) that is never closed.
    #[error("game tree opened here is never closed with `)`")]
    UnclosedGameTree,
    /// A property value (opened at the offset) that is never closed.
    #[error("unclosed property value")]
    UnclosedValue,
    /// A property value with no identifier before it.
    #[error("property value without an identifier")]
    MissingIdentifier,
    /// An identifier with no uppercase letter, hence empty once lowercase letters are dropped.
    #[error("empty property identifier {0:?}")]
    EmptyIdentifier(String),
    /// A property identifier not followed by a value.
    #[error("property {0} has no value (expected `[`)")]
    ExpectedValue(String),
    /// A character that is not part of the SGF syntax where it stands.
    #[error("unexpected {0:?} between nodes")]
    UnexpectedChar(char),
    /// A node after a sequence's variations.
    #[error("node after a variation (a sequence's nodes must come before its variations)")]
    NodeAfterVariation,
    /// The record is not a game of Go.
    #[error("GM[{0}] is not Go (GM[1])")]
    NotGo(String),
    /// `SZ` is not a supported board size.
    #[error("SZ[{0}] is not a board size of 2 to 25 per side")]
    BadSize(String),
    /// A point that cannot be read or is off the board.
    #[error("node {node}: {property}[{value}]: {reason}")]
    BadPoint {
        /// Main-line node number.
        node: usize,
        /// The property identifier.
        property: String,
        /// The value as written.
        value: String,
        /// Why the point was refused.
        reason: CoordError,
    },
    /// A move property without exactly one value.
    #[error("node {node}: move {property} has {values} values, expected 1")]
    BadMove {
        /// Main-line node number.
        node: usize,
        /// `B` or `W`.
        property: String,
        /// How many values it had.
        values: usize,
    },
    /// A move the board cannot carry out (occupied point, one-stone suicide).
    #[error("node {node}: illegal move {player} {property}[{value}]: {reason}")]
    IllegalMove {
        /// Main-line node number.
        node: usize,
        /// Who played it.
        player: Player,
        /// `B` or `W`.
        property: String,
        /// The point as written.
        value: String,
        /// Why the board refused it.
        reason: IllegalMove,
    },
    /// Setup stones that leave a chain without liberties.
    #[error("node {node}: bad setup: {reason}")]
    BadSetup {
        /// Main-line node number.
        node: usize,
        /// Why the setup was refused.
        reason: SetupError,
    },
}

/// Why a [`Property`] could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PropertyError {
    /// The identifier is not one or more uppercase letters `A`-`Z`.
    #[error("property identifier {0:?} is not one or more uppercase letters A-Z")]
    BadIdentifier(String),
    /// SGF needs at least one value per property.
    #[error("property {0} has no value")]
    NoValues(String),
}

/// Something in a record that [`load`] tolerated or worked around.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SgfWarning {
    /// `RU` was not understood; KataGo's default rules (Tromp-Taylor) were used.
    #[error("unknown rules RU[{0}], using Tromp-Taylor")]
    UnknownRules(String),
    /// `KM` is not a half-integer within ±400; the rules' komi was kept.
    #[error("ignored komi KM[{0}]")]
    BadKomi(String),
    /// `HA` is not a number.
    #[error("ignored handicap HA[{0}]")]
    BadHandicap(String),
    /// `PL` is not a colour.
    #[error("node {node}: ignored PL[{value}]")]
    BadPlayer {
        /// Main-line node number.
        node: usize,
        /// The value as written.
        value: String,
    },
    /// Setup in a later node restarted the game from the position reached there.
    #[error("node {node}: setup restarts the game, dropping {dropped_turns} earlier turns")]
    SetupRestart {
        /// Main-line node number.
        node: usize,
        /// Turns of history dropped.
        dropped_turns: usize,
    },
}

// ---------------------------------------------------------------------------
// The node tree

/// One property of a node: an identifier (uppercase letters) and one or more unescaped values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    id: String,
    values: Vec<String>,
}

impl Property {
    /// A property; the identifier must be uppercase `A`-`Z` and there must be a value.
    pub fn new(id: impl Into<String>, values: Vec<String>) -> Result<Property, PropertyError> {
        let id = id.into();
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(PropertyError::BadIdentifier(id));
        }
        if values.is_empty() {
            return Err(PropertyError::NoValues(id));
        }
        Ok(Property { id, values })
    }

    /// A property known to be valid (uppercase identifier, one value).
    fn one(id: &'static str, value: impl Into<String>) -> Property {
        Property {
            id: id.to_string(),
            values: vec![value.into()],
        }
    }

    /// The identifier, e.g. `AB`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The values, unescaped.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// The first value.
    pub fn value(&self) -> &str {
        self.values.first().map_or("", String::as_str)
    }
}

/// Names a node within its [`GameTree`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct NodeId(usize);

#[derive(Clone, Debug)]
struct NodeData {
    props: Vec<Property>,
    children: Vec<NodeId>,
    parent: Option<NodeId>,
    offset: Option<usize>,
}

/// Stands in for a node that is not there, so lookups never panic.
static NO_NODE: NodeData = NodeData {
    props: Vec::new(),
    children: Vec::new(),
    parent: None,
    offset: None,
};

/// One game tree: a root node and all its descendants (variations included).
///
/// Stored flat, so deep trees cost no stack to build, compare, write or drop.
/// Equality compares properties and tree shape, not source offsets.
#[derive(Clone, Debug)]
pub struct GameTree {
    /// Never empty: index 0 is the root.
    nodes: Vec<NodeData>,
}

impl GameTree {
    /// A tree with just a root node holding these properties.
    pub fn new(root: Vec<Property>) -> GameTree {
        GameTree {
            nodes: vec![NodeData {
                props: root,
                children: Vec::new(),
                parent: None,
                offset: None,
            }],
        }
    }

    /// Builds a tree from a [`Game`]: the record [`save`] writes.
    pub fn from_game(game: &Game) -> GameTree {
        game_to_tree(game)
    }

    /// The root node.
    pub fn root(&self) -> Node<'_> {
        Node {
            tree: self,
            id: NodeId(0),
        }
    }

    /// The node with this id, if it belongs to this tree.
    pub fn node(&self, id: NodeId) -> Option<Node<'_>> {
        (id.0 < self.nodes.len()).then_some(Node { tree: self, id })
    }

    /// Number of nodes, variations included.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Adds a last child (a main-line child if it is the first) to `parent`; `None` if there is no such node.
    pub fn add_child(&mut self, parent: NodeId, props: Vec<Property>) -> Option<NodeId> {
        let id = NodeId(self.nodes.len());
        self.nodes.get_mut(parent.0)?.children.push(id);
        self.nodes.push(NodeData {
            props,
            children: Vec::new(),
            parent: Some(parent),
            offset: None,
        });
        Some(id)
    }

    /// The properties of a node, to edit.
    pub fn properties_mut(&mut self, id: NodeId) -> Option<&mut Vec<Property>> {
        self.nodes.get_mut(id.0).map(|n| &mut n.props)
    }

    /// The main line: the root, then the first child of each node.
    pub fn main_line(&self) -> MainLine<'_> {
        MainLine {
            next: Some(self.root()),
        }
    }

    /// This tree as SGF text.
    pub fn to_sgf(&self) -> String {
        let mut out = String::new();
        self.write_into(&mut out);
        out
    }

    fn data(&self, id: NodeId) -> &NodeData {
        self.nodes.get(id.0).unwrap_or(&NO_NODE)
    }

    /// Writes `(;...)` with an explicit stack: a node with one child continues the
    /// sequence, several children become parenthesised variations.
    fn write_into(&self, out: &mut String) {
        enum Step {
            Node(NodeId),
            Open,
            Close,
        }
        out.push('(');
        let mut stack = vec![Step::Node(NodeId(0))];
        while let Some(step) = stack.pop() {
            let id = match step {
                Step::Open => {
                    out.push_str("\n(");
                    continue;
                }
                Step::Close => {
                    out.push(')');
                    continue;
                }
                Step::Node(id) => id,
            };
            let node = self.data(id);
            out.push(';');
            for p in &node.props {
                out.push_str(&p.id);
                for v in &p.values {
                    out.push('[');
                    escape_into(out, v);
                    out.push(']');
                }
            }
            if id.0 == 0 && node.children.len() == 1 {
                // The root holds the game info: on a line of its own, for people reading.
                out.push('\n');
            }
            match node.children.as_slice() {
                [] => {}
                [only] => stack.push(Step::Node(*only)),
                many => {
                    for &c in many.iter().rev() {
                        stack.push(Step::Close);
                        stack.push(Step::Node(c));
                        stack.push(Step::Open);
                    }
                }
            }
        }
        out.push(')');
    }
}

impl PartialEq for GameTree {
    fn eq(&self, other: &Self) -> bool {
        let mut stack = vec![(NodeId(0), NodeId(0))];
        while let Some((a, b)) = stack.pop() {
            let (a, b) = (self.data(a), other.data(b));
            if a.props != b.props || a.children.len() != b.children.len() {
                return false;
            }
            stack.extend(a.children.iter().copied().zip(b.children.iter().copied()));
        }
        true
    }
}

impl Eq for GameTree {}

/// A node of a [`GameTree`], borrowed from it.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    tree: &'a GameTree,
    id: NodeId,
}

impl<'a> Node<'a> {
    fn data(self) -> &'a NodeData {
        self.tree.data(self.id)
    }

    /// This node's id in its tree.
    pub fn id(self) -> NodeId {
        self.id
    }

    /// Byte offset of the node's `;` in the parsed text (`None` for nodes built in code).
    pub fn offset(self) -> Option<usize> {
        self.data().offset
    }

    /// All properties, in the order written.
    pub fn properties(self) -> &'a [Property] {
        &self.data().props
    }

    /// The first value of the first property with this identifier.
    pub fn get(self, id: &str) -> Option<&'a str> {
        self.properties()
            .iter()
            .find(|p| p.id == id)
            .map(Property::value)
    }

    /// Every value of every property with this identifier, in order.
    pub fn values(self, id: &str) -> Vec<&'a str> {
        self.properties()
            .iter()
            .filter(|p| p.id == id)
            .flat_map(|p| p.values.iter().map(String::as_str))
            .collect()
    }

    /// True if the node has a property with this identifier.
    pub fn has(self, id: &str) -> bool {
        self.properties().iter().any(|p| p.id == id)
    }

    /// The children, main line first.
    pub fn children(self) -> impl ExactSizeIterator<Item = Node<'a>> + 'a {
        let tree = self.tree;
        self.data()
            .children
            .iter()
            .map(move |&id| Node { tree, id })
    }

    /// The `i`-th child.
    pub fn child(self, i: usize) -> Option<Node<'a>> {
        self.data().children.get(i).map(|&id| Node {
            tree: self.tree,
            id,
        })
    }

    /// The main-line child.
    pub fn first_child(self) -> Option<Node<'a>> {
        self.child(0)
    }

    /// The parent (`None` at the root).
    pub fn parent(self) -> Option<Node<'a>> {
        self.data().parent.map(|id| Node {
            tree: self.tree,
            id,
        })
    }
}

impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.id)
            .field("offset", &self.offset())
            .field("properties", &self.properties())
            .field("children", &self.data().children)
            .finish()
    }
}

/// Iterator over a tree's main line (see [`GameTree::main_line`]).
#[derive(Clone, Debug)]
pub struct MainLine<'a> {
    next: Option<Node<'a>>,
}

impl<'a> Iterator for MainLine<'a> {
    type Item = Node<'a>;

    fn next(&mut self) -> Option<Node<'a>> {
        let n = self.next?;
        self.next = n.first_child();
        Some(n)
    }
}

// ---------------------------------------------------------------------------
// Reading and writing text

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

fn escape_into(out: &mut String, value: &str) {
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

// ---------------------------------------------------------------------------
// Go records

/// A comment (`C`) on a main-line node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeComment {
    /// Main-line node number (0 is the root).
    pub node: usize,
    /// How many of the game's turns have been played at this node (0 for nodes before a setup restart).
    pub turns: usize,
    /// The comment text.
    pub text: String,
}

/// A Go game read from SGF: the main line replayed as a [`Game`], with what the record says about it.
#[derive(Clone, Debug)]
pub struct SgfGame {
    /// The main line as a game (see the module docs for how it is replayed).
    pub game: Game,
    /// `HA`, the number of handicap stones, if given.
    pub handicap: Option<u32>,
    /// Comments along the main line.
    pub comments: Vec<NodeComment>,
    /// `RE`, the result as written.
    pub result: Option<String>,
    /// What was tolerated while reading.
    pub warnings: Vec<SgfWarning>,
    /// The game tree it was read from, variations included.
    pub tree: GameTree,
}

/// Reads the first game tree of an SGF text as a Go game.
pub fn load(text: &str) -> Result<SgfGame, SgfError> {
    let tree = parse(text)?.into_iter().next().ok_or(SgfError {
        offset: 0,
        kind: SgfErrorKind::NoGameTree,
    })?;
    SgfGame::from_tree(tree)
}

/// Writes a game as SGF FF\[4\]: setup and rules in the root, then one node per move.
pub fn save(game: &Game) -> String {
    write(&[game_to_tree(game)])
}

/// Rules from an `RU` value: anything [`Rules::parse`] reads (KataGo presets, JSON,
/// compact form), or a common SGF name such as `JP`, `Chinese rules`, `Ing`, `NZ`.
pub fn rules_from_name(name: &str) -> Option<Rules> {
    if let Ok(r) = Rules::parse(name) {
        return Some(r);
    }
    let key: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let key = key
        .strip_suffix("rules")
        .or_else(|| key.strip_suffix("rule"))
        .unwrap_or(&key);
    let preset = match key {
        "jp" | "jpn" | "japan" | "japanese" => "japanese",
        "cn" | "chn" | "china" | "chinese" => "chinese",
        "kr" | "kor" | "korea" | "korean" => "korean",
        "aga" | "american" => "aga",
        "goe" | "ing" | "inggoe" => "goe",
        "nz" | "newzealand" => "new-zealand",
        "tt" | "tromp" | "tromptaylor" => "tromp-taylor",
        "bga" | "british" => "bga",
        "french" | "ffg" => "french",
        _ => return None,
    };
    Rules::preset(preset)
}

impl SgfGame {
    /// Replays a game tree's main line (see the module docs).
    pub fn from_tree(tree: GameTree) -> Result<SgfGame, SgfError> {
        let root = tree.root();
        let root_offset = root.offset().unwrap_or(0);
        let mut warnings = Vec::new();

        if let Some(gm) = root.get("GM") {
            if gm.trim() != "1" {
                return Err(SgfError {
                    offset: root_offset,
                    kind: SgfErrorKind::NotGo(gm.to_string()),
                });
            }
        }
        let size = match root.get("SZ") {
            None => BoardSize::default(),
            Some(v) => parse_size(v).ok_or_else(|| SgfError {
                offset: root_offset,
                kind: SgfErrorKind::BadSize(v.to_string()),
            })?,
        };
        let mut rules = match root.get("RU") {
            None => Rules::default(),
            Some(ru) => rules_from_name(ru).unwrap_or_else(|| {
                warnings.push(SgfWarning::UnknownRules(ru.to_string()));
                Rules::default()
            }),
        };
        if let Some(km) = root.get("KM") {
            match km.trim().parse::<f64>() {
                Ok(k) if komi_is_valid(k) => rules.komi = k as f32,
                _ => warnings.push(SgfWarning::BadKomi(km.to_string())),
            }
        }
        let handicap = root.get("HA").and_then(|v| match v.trim().parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                warnings.push(SgfWarning::BadHandicap(v.to_string()));
                None
            }
        });

        let nodes: Vec<Node<'_>> = tree.main_line().collect();

        // The initial position from the root's setup.
        let mut board = Board::new(size);
        board
            .set_stones(&setup_placements(size, root, 0)?)
            .map_err(|reason| SgfError {
                offset: root_offset,
                kind: SgfErrorKind::BadSetup { node: 0, reason },
            })?;
        let black_only =
            board.num_stones(Player::White) == 0 && board.num_stones(Player::Black) > 0;
        let handicap_setup = black_only && handicap.unwrap_or(0) >= 2;
        let to_move = player_to_move(root, 0, &mut warnings)
            .or_else(|| first_mover(&nodes))
            .unwrap_or(if handicap_setup {
                Player::White
            } else {
                Player::Black
            });
        let stones = board.num_stones(Player::Black) as u32;
        let mut game = Game::from_position(board, to_move, rules, GameOptions::default());
        if black_only && stones >= 2 && to_move == Player::White {
            // As GTP's handicap placement counts it.
            game.set_initial_turn_number(stones);
        }

        let mut comments: Vec<NodeComment> = Vec::new();
        for (i, &node) in nodes.iter().enumerate() {
            let offset = node.offset().unwrap_or(0);
            if i > 0 && is_setup_node(node) {
                let mut board = game.board().clone();
                board
                    .set_stones(&setup_placements(size, node, i)?)
                    .map_err(|reason| SgfError {
                        offset,
                        kind: SgfErrorKind::BadSetup { node: i, reason },
                    })?;
                let to_move = player_to_move(node, i, &mut warnings)
                    .or_else(|| first_mover(nodes.get(i..).unwrap_or_default()))
                    .unwrap_or(game.to_move());
                warnings.push(SgfWarning::SetupRestart {
                    node: i,
                    dropped_turns: game.turns().len(),
                });
                for c in &mut comments {
                    c.turns = 0;
                }
                game = Game::from_position(board, to_move, *game.rules(), *game.options());
            }
            for p in node.properties() {
                let player = match p.id() {
                    "B" => Player::Black,
                    "W" => Player::White,
                    _ => continue,
                };
                let [value] = p.values() else {
                    return Err(SgfError {
                        offset,
                        kind: SgfErrorKind::BadMove {
                            node: i,
                            property: p.id().to_string(),
                            values: p.values().len(),
                        },
                    });
                };
                let mv = size.parse_sgf(value.trim()).map_err(|reason| SgfError {
                    offset,
                    kind: SgfErrorKind::BadPoint {
                        node: i,
                        property: p.id().to_string(),
                        value: value.clone(),
                        reason,
                    },
                })?;
                game.play_tolerant(player, mv).map_err(|reason| SgfError {
                    offset,
                    kind: SgfErrorKind::IllegalMove {
                        node: i,
                        player,
                        property: p.id().to_string(),
                        value: value.clone(),
                        reason,
                    },
                })?;
            }
            if node.has("C") {
                comments.push(NodeComment {
                    node: i,
                    turns: game.turns().len(),
                    text: node.values("C").join("\n"),
                });
            }
        }

        let result = root.get("RE").map(str::to_string);
        if let (Some(winner), None) = (
            result.as_deref().and_then(resignation_winner),
            game.outcome(),
        ) {
            game.resign(winner.opp());
        }
        drop(nodes); // its borrow of `tree` ends before `tree` moves into the record
        Ok(SgfGame {
            game,
            handicap,
            comments,
            result,
            warnings,
            tree,
        })
    }
}

/// `SZ[19]` or `SZ[columns:rows]`.
fn parse_size(v: &str) -> Option<BoardSize> {
    let num = |s: &str| s.trim().parse::<usize>().ok();
    let (x, y) = match v.split_once(':') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(v)?;
            (n, n)
        }
    };
    BoardSize::new(x, y).ok()
}

fn is_setup_node(node: Node<'_>) -> bool {
    node.properties()
        .iter()
        .any(|p| matches!(p.id(), "AB" | "AW" | "AE"))
}

/// The node's `AB`/`AW`/`AE` as placements, in the order written (later ones win).
fn setup_placements(
    size: BoardSize,
    node: Node<'_>,
    index: usize,
) -> Result<Vec<(Loc, Option<Player>)>, SgfError> {
    let mut out = Vec::new();
    for p in node.properties() {
        let stone = match p.id() {
            "AB" => Some(Player::Black),
            "AW" => Some(Player::White),
            "AE" => None,
            _ => continue,
        };
        for v in p.values() {
            let points = point_list(size, v).map_err(|reason| SgfError {
                offset: node.offset().unwrap_or(0),
                kind: SgfErrorKind::BadPoint {
                    node: index,
                    property: p.id().to_string(),
                    value: v.clone(),
                    reason,
                },
            })?;
            out.extend(points.into_iter().map(|l| (l, stone)));
        }
    }
    Ok(out)
}

/// One point-list value: a point, or a compressed rectangle `aa:cc` (corners in any order).
/// An empty value adds nothing.
fn point_list(size: BoardSize, value: &str) -> Result<Vec<Loc>, CoordError> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let point = |s: &str| match size.parse_sgf(s)? {
        Move::Play(l) => Ok(size.xy(l)),
        Move::Pass => Err(CoordError::Syntax(s.to_string())),
    };
    let (a, b) = match value.split_once(':') {
        Some((a, b)) => (point(a)?, point(b)?),
        None => {
            let p = point(value)?;
            (p, p)
        }
    };
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    Ok((y0..=y1)
        .flat_map(|y| (x0..=x1).filter_map(move |x| size.loc(x, y)))
        .collect())
}

/// `PL` of a node, if present and readable.
fn player_to_move(node: Node<'_>, index: usize, warnings: &mut Vec<SgfWarning>) -> Option<Player> {
    let v = node.get("PL")?;
    match v.parse::<Player>() {
        Ok(p) => Some(p),
        Err(_) => {
            warnings.push(SgfWarning::BadPlayer {
                node: index,
                value: v.to_string(),
            });
            None
        }
    }
}

/// Colour of the first move from `nodes[0]` on, before any later setup node.
fn first_mover(nodes: &[Node<'_>]) -> Option<Player> {
    for (k, node) in nodes.iter().enumerate() {
        if k > 0 && is_setup_node(*node) {
            return None;
        }
        for p in node.properties() {
            match p.id() {
                "B" => return Some(Player::Black),
                "W" => return Some(Player::White),
                _ => {}
            }
        }
    }
    None
}

/// The winner of `B+R`, `W+Resign` and the like.
fn resignation_winner(result: &str) -> Option<Player> {
    let r = result.trim().to_ascii_uppercase();
    let (winner, how) = if let Some(rest) = r.strip_prefix("B+") {
        (Player::Black, rest)
    } else {
        (Player::White, r.strip_prefix("W+")?)
    };
    (how == "R" || how == "RESIGN").then_some(winner)
}

fn game_to_tree(game: &Game) -> GameTree {
    let board = game.initial_board();
    let size = board.size();
    let rules = game.rules();
    let mut root = vec![
        Property::one("FF", "4"),
        Property::one("GM", "1"),
        Property::one("CA", "UTF-8"),
        Property::one("AP", format!("Tengen:{}", env!("CARGO_PKG_VERSION"))),
        Property::one(
            "SZ",
            if size.width() == size.height() {
                size.width().to_string()
            } else {
                format!("{}:{}", size.width(), size.height())
            },
        ),
        Property::one("KM", rules.komi.to_string()),
        // Komi is in KM, so the compact form leaves it out (as KataGo's records do).
        Property::one(
            "RU",
            rules
                .nice_name()
                .map_or_else(|| rules.compact_no_komi(), str::to_string),
        ),
    ];
    let stones = |p: Player| -> Vec<String> {
        size.points()
            .filter(|&l| board.stone(l) == Some(p))
            .map(|l| size.sgf(Move::Play(l)))
            .collect()
    };
    let (black, white) = (stones(Player::Black), stones(Player::White));
    // What Game counts as handicap: two or more Black stones and no White ones.
    let handicap = white.is_empty() && black.len() >= 2;
    if handicap {
        root.push(Property::one("HA", black.len().to_string()));
    }
    if !black.is_empty() {
        root.push(Property {
            id: "AB".to_string(),
            values: black,
        });
    }
    if !white.is_empty() {
        root.push(Property {
            id: "AW".to_string(),
            values: white,
        });
    }
    // Only when load's rule for a missing PL would pick someone else.
    let default = game
        .turns()
        .first()
        .map(|t| t.player)
        .unwrap_or(if handicap {
            Player::White
        } else {
            Player::Black
        });
    if game.initial_player() != default {
        root.push(Property::one(
            "PL",
            game.initial_player().letter().to_string(),
        ));
    }
    if let Some(o) = game.outcome() {
        root.push(Property::one("RE", o.sgf_result()));
    }
    let mut tree = GameTree::new(root);
    let mut parent = NodeId(0);
    for t in game.turns() {
        let id = match t.player {
            Player::Black => "B",
            Player::White => "W",
        };
        if let Some(child) = tree.add_child(parent, vec![Property::one(id, size.sgf(t.mv))]) {
            parent = child;
        }
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> SgfError {
        match parse(text) {
            Ok(t) => panic!("{text:?} parsed: {t:?}"),
            Err(e) => e,
        }
    }

    fn one(text: &str) -> GameTree {
        let mut trees = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(trees.len(), 1);
        trees.remove(0)
    }

    fn load_ok(text: &str) -> SgfGame {
        load(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn load_err(text: &str) -> SgfError {
        match load(text) {
            Ok(g) => panic!("{text:?} loaded: {:?}", g.game),
            Err(e) => e,
        }
    }

    fn pt(size: BoardSize, s: &str) -> Loc {
        match size.parse_sgf(s) {
            Ok(Move::Play(l)) => l,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn parse_errors_report_byte_offsets() {
        use SgfErrorKind as K;
        let cases: &[(&str, usize, SgfErrorKind)] = &[
            ("", 0, K::NoGameTree),
            ("  \n", 3, K::NoGameTree),
            ("x(;B[aa])", 0, K::ExpectedGameTree('x')),
            ("(;B[aa]) junk", 9, K::ExpectedGameTree('j')),
            ("(;B[aa]))", 8, K::ExpectedGameTree(')')),
            ("(B[aa])", 1, K::ExpectedNode('B')),
            ("( )", 2, K::ExpectedNode(')')),
            ("(", 0, K::UnclosedGameTree),
            ("(;B[aa]", 0, K::UnclosedGameTree),
            ("(;B[aa](;W[bb])", 0, K::UnclosedGameTree),
            ("(;B[aa](;W[bb]", 7, K::UnclosedGameTree),
            ("(;C[abc", 3, K::UnclosedValue),
            ("(;C[abc\\]", 3, K::UnclosedValue),
            ("(;GM[1]C[ab\\", 8, K::UnclosedValue),
            ("(;[aa])", 2, K::MissingIdentifier),
            ("(;add[aa])", 2, K::EmptyIdentifier("add".into())),
            ("(;B)", 3, K::ExpectedValue("B".into())),
            ("(;B", 3, K::ExpectedValue("B".into())),
            ("(;B  ;W[aa])", 5, K::ExpectedValue("B".into())),
            ("(;B[aa] 12 ;W[bb])", 8, K::UnexpectedChar('1')),
            ("(;B[aa]é)", 7, K::UnexpectedChar('é')),
            ("(;B[aa](;W[bb]);B[cc])", 15, K::NodeAfterVariation),
        ];
        for (text, offset, kind) in cases {
            let e = err(text);
            assert_eq!((e.offset, &e.kind), (*offset, kind), "{text:?}: {e}");
        }
    }

    #[test]
    fn error_display_shows_the_offset() {
        let e = err("(;GM[1];B[aa]C[never closed");
        assert_eq!(e.to_string(), "byte 14: unclosed property value");
        let e = load_err("(;SZ[9];B[aa];W[aa])");
        assert_eq!(e.offset, 13);
        assert!(
            e.to_string()
                .starts_with("byte 13: node 2: illegal move White W[aa]"),
            "{e}"
        );
    }

    #[test]
    fn escapes_and_soft_line_breaks() {
        let t = one("(;C[a\\]b\\\\c\\:d\\e]N[x\\\ny\\\r\nz\\\rw\\\n\rv]GN[line\nbreak\r\nkept])");
        let r = t.root();
        assert_eq!(r.get("C"), Some("a]b\\c:de"));
        assert_eq!(r.get("N"), Some("xyzwv"));
        assert_eq!(r.get("GN"), Some("line\nbreak\r\nkept"));
        // An escaped multi-byte character stays whole.
        assert_eq!(one("(;C[\\日本])").root().get("C"), Some("日本"));
    }

    #[test]
    fn lowercase_letters_in_identifiers_are_dropped() {
        let t = one("(;GaMe[1]AddBlack[aa][bb]\n  ;Black[cc])");
        assert_eq!(t.root().get("GM"), Some("1"));
        assert_eq!(t.root().values("AB"), ["aa", "bb"]);
        assert_eq!(t.root().first_child().and_then(|n| n.get("B")), Some("cc"));
    }

    #[test]
    fn whitespace_between_tokens_and_several_trees() {
        let text =
            "\u{feff} \n ( ; FF [4] \t GM\n[1] ; B [aa] ( ; W[bb] ) ( ;W[cc] ) )\r\n(;GM[1])\n";
        let trees = parse(text).unwrap();
        assert_eq!(trees.len(), 2);
        let t = &trees[0];
        assert_eq!(t.root().properties().len(), 2);
        assert_eq!(t.root().offset(), Some(8)); // after a 3-byte BOM
        assert_eq!(t.main_line().count(), 3);
        assert_eq!(t.node_count(), 4);
        assert_eq!(trees[1].root().get("GM"), Some("1"));
        // Whitespace between the values of one property too.
        assert_eq!(
            one("(;B[aa][bb] [cc]\n[dd])").root().values("B"),
            ["aa", "bb", "cc", "dd"]
        );
    }

    #[test]
    fn variations_are_kept_and_the_main_line_is_the_first_child() {
        let t = one("(;GM[1];B[aa](;W[bb];B[cc](;W[dd])(;W[ee]))(;W[ff]))");
        let moves: Vec<_> = t
            .main_line()
            .filter_map(|n| n.get("B").or(n.get("W")))
            .collect();
        assert_eq!(moves, ["aa", "bb", "cc", "dd"]);
        let b1 = t.root().first_child().unwrap();
        assert_eq!(b1.children().len(), 2);
        let alt: Vec<_> = b1.children().map(|n| n.get("W").unwrap()).collect();
        assert_eq!(alt, ["bb", "ff"]);
        let cc = b1.child(0).unwrap().first_child().unwrap();
        assert_eq!(
            cc.children()
                .map(|n| n.get("W").unwrap())
                .collect::<Vec<_>>(),
            ["dd", "ee"]
        );
        assert_eq!(cc.parent().unwrap().parent().unwrap().id(), b1.id());
        assert_eq!(t.node_count(), 7);
        assert_eq!(one(&t.to_sgf()), t);
    }

    #[test]
    fn writer_escapes_and_round_trips() {
        let mut t = GameTree::new(vec![Property::new(
            "C",
            vec!["a]b\\c\n\\".into(), "".into(), "日本]".into()],
        )
        .unwrap()]);
        let root = t.root().id();
        let a = t
            .add_child(root, vec![Property::new("B", vec!["aa".into()]).unwrap()])
            .unwrap();
        t.add_child(root, vec![]).unwrap();
        t.add_child(a, vec![Property::new("W", vec!["bb".into()]).unwrap()])
            .unwrap();
        let text = t.to_sgf();
        assert_eq!(
            text,
            "(;C[a\\]b\\\\c\n\\\\][][日本\\]]\n(;B[aa];W[bb])\n(;))"
        );
        assert_eq!(one(&text), t);
        assert_eq!(write(&[t.clone(), t.clone()]), format!("{text}\n{text}\n"));
        assert!(Property::new("Ab", vec!["x".into()]).is_err());
        assert!(Property::new("", vec!["x".into()]).is_err());
        assert!(Property::new("AB", vec![]).is_err());
        assert!(t.properties_mut(NodeId(99)).is_none());
        assert!(t.add_child(NodeId(99), vec![]).is_none());
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        const N: usize = 100_000;
        let e = err(&"(".repeat(N));
        assert_eq!((e.offset, e.kind), (1, SgfErrorKind::ExpectedNode('(')));
        let e = err(&"(;".repeat(N));
        assert_eq!(
            (e.offset, e.kind),
            (2 * (N - 1), SgfErrorKind::UnclosedGameTree)
        );
        let nested = format!("{}{}", "(;".repeat(N), ")".repeat(N));
        let t = one(&nested);
        assert_eq!(t.main_line().count(), N);
        // Written back as one long sequence: a different text for the same tree.
        let text = t.to_sgf();
        assert_eq!(text.len(), N + 3); // `(`, N `;`, a line break after the root, `)`
        assert_eq!(one(&text), t);
        drop(t);
        // A long game loads too.
        let long = format!("(;SZ[2]{})", ";B[];W[]".repeat(N / 2));
        assert_eq!(load_ok(&long).game.turns().len(), N);
    }

    #[test]
    fn compressed_point_lists() {
        let g = load_ok("(;SZ[5]AB[aa:cc][ee]AW[dd:ed]AE[bb])");
        let s = g.game.board().size();
        let b = g.game.initial_board();
        assert_eq!(b.num_stones(Player::Black), 9);
        assert_eq!(b.num_stones(Player::White), 2);
        assert_eq!(b.stone(pt(s, "bb")), None);
        assert_eq!(b.stone(pt(s, "cc")), Some(Player::Black));
        assert_eq!(b.stone(pt(s, "ed")), Some(Player::White));
        // Corners in any order give the same rectangle.
        let g2 = load_ok("(;SZ[5]AB[cc:aa][ee]AW[ed:dd]AE[bb])");
        assert_eq!(g2.game.initial_board(), b);
        assert!(matches!(
            load_err("(;SZ[5]AB[aa:ff])").kind,
            SgfErrorKind::BadPoint { node: 0, ref property, .. } if property == "AB"
        ));
        assert!(load_err("(;SZ[5]AB[aa:])").kind != SgfErrorKind::NoGameTree);
    }

    #[test]
    fn rectangular_sizes() {
        let g = load_ok("(;GM[1]SZ[9:13];B[im];W[ai])");
        let s = g.game.board().size();
        assert_eq!((s.width(), s.height()), (9, 13));
        assert_eq!(
            g.game.board().stone(s.loc(8, 12).unwrap()),
            Some(Player::Black)
        );
        assert_eq!(
            g.game.board().stone(s.loc(0, 8).unwrap()),
            Some(Player::White)
        );
        assert!(matches!(
            load_err("(;SZ[9:13];B[ma])").kind,
            SgfErrorKind::BadPoint { node: 1, .. }
        ));
        assert_eq!(
            load_ok("(;SZ[ 7 : 3 ])").game.board().size(),
            BoardSize::new(7, 3).unwrap()
        );
        let out = save(&g.game);
        assert!(out.contains("SZ[9:13]"), "{out}");
    }

    #[test]
    fn bad_sizes_are_errors() {
        for sz in ["1", "26", "0:9", "9:", "nine", "", "19:19:19", "-9"] {
            let text = format!("(;GM[1]SZ[{sz}])");
            let e = load_err(&text);
            assert_eq!(
                (e.offset, e.kind),
                (1, SgfErrorKind::BadSize(sz.to_string())),
                "{sz}"
            );
        }
    }

    #[test]
    fn passes_are_empty_values_and_tt_up_to_19() {
        let g = load_ok("(;SZ[19];B[];W[tt];B[ ])");
        assert!(g.game.turns().iter().all(|t| t.mv == Move::Pass));
        assert_eq!(g.game.turns().len(), 3);
        let g = load_ok("(;SZ[21];B[tt])");
        let s = g.game.board().size();
        assert_eq!(g.game.turns()[0].mv, Move::Play(s.loc(19, 19).unwrap()));
        assert!(save(&g.game).contains(";B[tt]"));
        let g = load_ok("(;SZ[21];B[])");
        assert_eq!(g.game.turns()[0].mv, Move::Pass);
        assert!(save(&g.game).contains(";B[])"));
    }

    #[test]
    fn illegal_moves_name_the_node() {
        let text = "(;SZ[9]\n;B[ee];W[dd]\n;B[ee])";
        let e = load_err(text);
        assert_eq!(e.offset, text.rfind(';').unwrap());
        match e.kind {
            SgfErrorKind::IllegalMove {
                node,
                player,
                reason,
                ..
            } => {
                assert_eq!(
                    (node, player, reason),
                    (3, Player::Black, IllegalMove::Occupied)
                );
            }
            k => panic!("{k:?}"),
        }
        // One-stone suicide in the corner.
        let text = "(;SZ[9]AW[ba][ab];B[aa])";
        let e = load_err(text);
        assert_eq!(e.offset, 17);
        assert!(matches!(
            e.kind,
            SgfErrorKind::IllegalMove {
                node: 1,
                reason: IllegalMove::Suicide,
                ..
            }
        ));
        // Multi-stone suicide, superko, out-of-turn moves are tolerated.
        let g = load_ok("(;SZ[9]RU[Japanese]AB[ba]AW[ca][bb][ab];B[aa];B[ee];B[ff])");
        assert_eq!(g.game.turns().len(), 3);
        assert_eq!(
            g.game
                .board()
                .stone(pt(BoardSize::square(9).unwrap(), "aa")),
            None
        );
        let e = load_err("(;SZ[9];B[aa][bb])");
        assert!(matches!(
            e.kind,
            SgfErrorKind::BadMove {
                node: 1,
                values: 2,
                ..
            }
        ));
    }

    #[test]
    fn bad_coordinates_are_errors() {
        for (text, node) in [
            ("(;SZ[9];B[jj])", 1),
            ("(;SZ[9];B[e])", 1),
            ("(;SZ[9];W[a1])", 1),
            ("(;AB[tt])", 0),
            ("(;SZ[9]AW[zz])", 0),
        ] {
            let e = load_err(text);
            assert!(
                matches!(e.kind, SgfErrorKind::BadPoint { node: n, .. } if n == node),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn setup_without_liberties_is_an_error() {
        let e = load_err("(;SZ[9]AB[aa]AW[ba][ab])");
        assert_eq!(e.offset, 1);
        assert!(matches!(
            e.kind,
            SgfErrorKind::BadSetup {
                node: 0,
                reason: SetupError::NoLiberties(0)
            }
        ));
        let text = "(;SZ[9];B[aa];W[ba];B[ee]AW[ab])";
        let e = load_err(text);
        assert_eq!(e.offset, text.rfind(';').unwrap());
        assert!(matches!(e.kind, SgfErrorKind::BadSetup { node: 3, .. }));
    }

    #[test]
    fn other_games_are_refused() {
        let e = load_err("(;GM[2]SZ[8])");
        assert_eq!((e.offset, e.kind), (1, SgfErrorKind::NotGo("2".into())));
        assert!(load("(;GM[1])").is_ok());
        assert!(load("(;GM[ 1 ])").is_ok());
    }

    #[test]
    fn rules_names_and_fallback() {
        let cases = [
            ("Japanese", Rules::japanese()),
            ("japanese", Rules::japanese()),
            ("Chinese", Rules::chinese()),
            ("CN", Rules::chinese()),
            ("Chinese rules", Rules::chinese()),
            ("AGA", Rules::preset("aga").unwrap()),
            ("GOE", Rules::preset("goe").unwrap()),
            ("Ing", Rules::preset("goe").unwrap()),
            ("NZ", Rules::preset("nz").unwrap()),
            ("New Zealand", Rules::preset("nz").unwrap()),
            ("Korean", Rules::preset("korean").unwrap()),
            ("Tromp-Taylor", Rules::tromp_taylor()),
            ("koSIMPLEscoreAREAtaxNONEsui0whbNfpok1", Rules::chinese()),
        ];
        for (name, want) in cases {
            let g = load_ok(&format!("(;RU[{name}])"));
            assert_eq!(*g.game.rules(), want, "{name}");
            assert!(g.warnings.is_empty(), "{name}");
        }
        let g = load_ok("(;RU[Martian]KM[3])");
        assert!(g.game.rules().equals_ignoring_komi(&Rules::tromp_taylor()));
        assert_eq!(g.game.rules().komi, 3.0);
        assert_eq!(g.warnings, [SgfWarning::UnknownRules("Martian".into())]);
        let g = load_ok("(;GM[1])");
        assert_eq!(*g.game.rules(), Rules::default());
        assert!(g.warnings.is_empty());
        // Compact text with komi: KM wins when present.
        assert_eq!(
            load_ok("(;RU[koSIMPLEscoreAREAkomi5])").game.rules().komi,
            5.0
        );
        assert_eq!(
            load_ok("(;RU[koSIMPLEscoreAREAkomi5]KM[0.5])")
                .game
                .rules()
                .komi,
            0.5
        );
        assert_eq!(rules_from_name("nonsense"), None);
    }

    #[test]
    fn komi_and_handicap() {
        let g = load_ok("(;RU[Japanese])");
        assert_eq!(g.game.rules().komi, 6.5);
        let g = load_ok("(;RU[Japanese]KM[-2.5]HA[3])");
        assert_eq!((g.game.rules().komi, g.handicap), (-2.5, Some(3)));
        let g = load_ok("(;RU[Chinese]KM[7.3]HA[two])");
        assert_eq!((g.game.rules().komi, g.handicap), (7.5, None));
        assert_eq!(
            g.warnings,
            [
                SgfWarning::BadKomi("7.3".into()),
                SgfWarning::BadHandicap("two".into())
            ]
        );
    }

    #[test]
    fn the_first_player() {
        let p = |text: &str| load_ok(text).game.initial_player();
        assert_eq!(p("(;SZ[9])"), Player::Black);
        assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg])"), Player::White);
        assert_eq!(p("(;SZ[9]AB[cc][gg])"), Player::Black);
        assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg]AW[ee])"), Player::Black);
        assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg]PL[B])"), Player::Black);
        assert_eq!(p("(;SZ[9]PL[W])"), Player::White);
        assert_eq!(p("(;SZ[9]PL[white])"), Player::White);
        // Without PL, the first move tells.
        assert_eq!(p("(;SZ[9];W[ee])"), Player::White);
        assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg];B[ee])"), Player::Black);
        let g = load_ok("(;SZ[9]PL[x])");
        assert_eq!(g.game.initial_player(), Player::Black);
        assert_eq!(
            g.warnings,
            [SgfWarning::BadPlayer {
                node: 0,
                value: "x".into()
            }]
        );
        let g = load_ok("(;SZ[9]HA[2]AB[cc][gg])");
        assert_eq!(g.game.initial_turn_number(), 2);
    }

    #[test]
    fn setup_in_a_later_node_restarts_the_game() {
        let g = load_ok("(;SZ[9];B[ee]C[first];W[dd];B[cc]AW[aa]AE[ee]C[setup];W[ff]C[after])");
        let s = g.game.board().size();
        assert_eq!(
            g.warnings,
            [SgfWarning::SetupRestart {
                node: 3,
                dropped_turns: 2
            }]
        );
        let init = g.game.initial_board();
        assert_eq!(init.stone(pt(s, "dd")), Some(Player::White));
        assert_eq!(init.stone(pt(s, "aa")), Some(Player::White));
        assert_eq!(init.stone(pt(s, "ee")), None);
        assert_eq!(init.stone(pt(s, "cc")), None);
        // The node's own move comes after its setup, and decides who moved first.
        let turns: Vec<_> = g
            .game
            .turns()
            .iter()
            .map(|t| (t.player, s.sgf(t.mv)))
            .collect();
        assert_eq!(
            turns,
            [(Player::Black, "cc".into()), (Player::White, "ff".into())]
        );
        assert_eq!(g.game.initial_player(), Player::Black);
        let c: Vec<_> = g
            .comments
            .iter()
            .map(|c| (c.node, c.turns, c.text.as_str()))
            .collect();
        assert_eq!(c, [(1, 0, "first"), (3, 1, "setup"), (4, 2, "after")]);
    }

    #[test]
    fn comments_along_the_main_line() {
        let g = load_ok("(;SZ[9]C[root];B[ee]C[one]C[more](;W[dd]C[main])(;W[cc]C[side]))");
        let c: Vec<_> = g
            .comments
            .iter()
            .map(|c| (c.node, c.turns, c.text.as_str()))
            .collect();
        assert_eq!(c, [(0, 0, "root"), (1, 1, "one\nmore"), (2, 2, "main")]);
        assert_eq!(g.tree.node_count(), 4);
    }

    #[test]
    fn save_writes_the_header_and_reads_back() {
        let size = BoardSize::new(9, 7).unwrap();
        let stones = [size.loc(2, 2).unwrap(), size.loc(6, 4).unwrap()];
        let mut game = Game::with_handicap(size, Rules::preset("aga").unwrap(), &stones).unwrap();
        game.set_komi(0.5);
        for m in ["ee", "dd", "", "cd"] {
            let mv = size.parse_sgf(m).unwrap();
            game.play(mv).unwrap();
        }
        let text = save(&game);
        let head = format!("(;FF[4]GM[1]CA[UTF-8]AP[Tengen:{}]SZ[9:7]KM[0.5]RU[AGA]HA[2]AB[cc][ge]\n;W[ee];B[dd];W[];B[cd])\n", env!("CARGO_PKG_VERSION"));
        assert_eq!(text, head);
        let back = load_ok(&text);
        assert_eq!(back.game.turns(), game.turns());
        assert_eq!(back.game.initial_board(), game.initial_board());
        assert_eq!(back.game.initial_player(), Player::White);
        assert_eq!(*back.game.rules(), *game.rules());
        assert_eq!(back.handicap, Some(2));
        assert!(back.warnings.is_empty());
        // Rules without a nice name are written in the compact form, komi in KM.
        let odd = Rules::parse("koSPIGHTscoreAREAtaxALLsui1komi2").unwrap();
        let g = Game::new(BoardSize::square(5).unwrap(), odd);
        let text = save(&g);
        assert!(
            text.contains("KM[2]RU[koSPIGHTscoreAREAtaxALLsui1]"),
            "{text}"
        );
        assert_eq!(*load_ok(&text).game.rules(), odd);
        // A first player that is not the default is written.
        let mut g = Game::from_position(
            Board::new(size),
            Player::White,
            Rules::japanese(),
            GameOptions::default(),
        );
        assert!(save(&g).contains("PL[W]"));
        g.play(Move::Pass).unwrap();
        assert!(!save(&g).contains("PL["));
    }

    #[test]
    fn results_and_resignation_round_trip() {
        let size = BoardSize::square(5).unwrap();
        let mut game = Game::new(size, Rules::tromp_taylor());
        game.play(size.parse_sgf("cc").unwrap()).unwrap();
        game.resign(Player::White);
        let g = load_ok(&save(&game));
        assert_eq!(g.result.as_deref(), Some("B+R"));
        assert_eq!(g.game.outcome(), game.outcome());
        // Two passes score the game again on replay.
        let mut game = Game::new(size, Rules::tromp_taylor());
        for m in ["cc", "", ""] {
            game.play(size.parse_sgf(m).unwrap()).unwrap();
        }
        let text = save(&game);
        assert!(text.contains("RE[B+17.5]"), "{text}");
        let g = load_ok(&text);
        assert_eq!(g.game.outcome(), game.outcome());
        assert_eq!(resignation_winner("W+Resign"), Some(Player::White));
        assert_eq!(resignation_winner("B+3.5"), None);
        assert_eq!(resignation_winner("Void"), None);
    }
}
