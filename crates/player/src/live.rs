//! What the live classroom adds to the stage while agents talk: the drawings, deletions and
//! effects of their actions, on top of the lecture's own fold. The lecture's board is never
//! changed, so a seek still lands exactly where the script says; the live layer belongs to one
//! scene and is dropped when another scene shows.
//!
//! Rules: a live drawing is laid out against everything on the board at that moment and opens
//! the board; drawing, editing or deleting an element the lecture drew hides the lecture's copy;
//! a live clear hides everything the lecture has drawn so far and the earlier live drawings.
//! Live drawings stay for the rest of the scene; the board's open/closed state and the
//! spotlight and laser are the round's and go when the lecture resumes.

use std::collections::HashSet;

use aula_course::Action;
use aula_timeline::drawn_element_id;

use crate::layout;
use crate::stage::{
    content_of, edit_code, requested_frame, Board, BoardContent, BoardItem, Effects,
};

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LiveLayer {
    scene: usize,
    items: Vec<BoardItem>,
    /// Lecture elements a live action took off (or replaced).
    hidden: HashSet<String>,
    open: Option<bool>,
    effects: Effects,
}

impl LiveLayer {
    /// Applies one live action in scene `scene`, whose lecture board is `lecture` now. Returns
    /// whether it changed anything (an action that does nothing on the stage, such as speech,
    /// returns false).
    pub fn apply(&mut self, scene: usize, lecture: &Board, action: &Action) -> bool {
        self.follow(scene);
        let mut board = lecture.clone();
        self.overlay(scene, &mut board, &mut (None, None));
        match action {
            Action::WbOpen(_) => self.open = Some(true),
            Action::WbClose(_) => self.open = Some(false),
            Action::WbClear(_) => {
                self.hidden
                    .extend(lecture.items.iter().map(|i| i.element_id.clone()));
                self.items.clear();
            }
            Action::WbDelete(delete) => {
                self.items.retain(|i| i.element_id != delete.element_id);
                self.hidden.insert(delete.element_id.clone());
            }
            Action::WbEditCode(edit) => {
                let Some(mut item) = board
                    .items
                    .into_iter()
                    .find(|i| i.element_id == edit.element_id)
                else {
                    return false;
                };
                let BoardContent::Code { lines, .. } = &mut item.content else {
                    return false;
                };
                edit_code(lines, edit);
                self.put(item);
            }
            Action::Spotlight(s) => self.effects.0 = Some((s.element_id.clone(), s.dim_opacity)),
            Action::Laser(l) => self.effects.1 = Some((l.element_id.clone(), l.color.clone())),
            action => {
                let (Some(id), Some(content), Some(wanted)) = (
                    drawn_element_id(action),
                    content_of(action),
                    requested_frame(action),
                ) else {
                    return false;
                };
                let frame = if matches!(content, BoardContent::Line(_)) {
                    wanted
                } else {
                    let others: Vec<_> = board
                        .items
                        .iter()
                        .filter(|i| {
                            i.element_id != id && !matches!(i.content, BoardContent::Line(_))
                        })
                        .map(|i| i.frame)
                        .collect();
                    layout::place(wanted, &others)
                };
                self.put(BoardItem {
                    element_id: id.to_owned(),
                    content,
                    frame,
                    progress: 1.0,
                });
                self.open = Some(true);
            }
        }
        true
    }

    /// Scene `scene` shows: a layer of another scene is dropped.
    pub fn follow(&mut self, scene: usize) {
        if self.scene != scene {
            *self = LiveLayer {
                scene,
                ..LiveLayer::default()
            };
        }
    }

    fn put(&mut self, item: BoardItem) {
        self.hidden.insert(item.element_id.clone());
        match self
            .items
            .iter_mut()
            .find(|i| i.element_id == item.element_id)
        {
            Some(existing) => *existing = item,
            None => self.items.push(item),
        }
    }

    /// Lays the layer over the lecture's board and effects of scene `scene` (nothing if the
    /// layer belongs to another scene).
    pub fn overlay(&self, scene: usize, board: &mut Board, effects: &mut Effects) {
        if self.scene != scene {
            return;
        }
        board.items.retain(|i| !self.hidden.contains(&i.element_id));
        board.items.extend(self.items.iter().cloned());
        if let Some(open) = self.open {
            board.open = open;
        }
        if self.effects.0.is_some() {
            effects.0.clone_from(&self.effects.0);
        }
        if self.effects.1.is_some() {
            effects.1.clone_from(&self.effects.1);
        }
    }

    /// The round is over and the lecture goes on: its own board state and effects show again;
    /// the drawings stay.
    pub fn end_round(&mut self) {
        self.open = None;
        self.effects = (None, None);
    }
}
