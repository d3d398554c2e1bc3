//! The SGF node tree: properties in order, every variation kept, stored flat.

use super::record::game_to_tree;
use super::text::escape_into;
use super::*;
use crate::game::Game;

/// One property of a node: an identifier (uppercase letters) and one or more unescaped values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub(super) id: String,
    pub(super) values: Vec<String>,
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
    pub(super) fn one(id: &'static str, value: impl Into<String>) -> Property {
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
pub struct NodeId(pub(super) usize);

#[derive(Clone, Debug)]
pub(super) struct NodeData {
    pub(super) props: Vec<Property>,
    pub(super) children: Vec<NodeId>,
    pub(super) parent: Option<NodeId>,
    pub(super) offset: Option<usize>,
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
    pub(super) nodes: Vec<NodeData>,
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
    pub(super) fn write_into(&self, out: &mut String) {
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
