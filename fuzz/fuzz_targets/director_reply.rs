//! The director's routing reply, `aula_director::parse_director_reply`: who speaks next.
//!
//! Whatever the reply, the decision names only an agent in the room, and a reply over
//! `MAX_REPLY_BYTES` is refused unread.
#![no_main]

use aula_director::{parse_director_reply, Decision, EndReason, MAX_REPLY_BYTES};
use libfuzzer_sys::fuzz_target;

const ROOM: [&str; 3] = ["teacher", "mia", "leo"];

fuzz_target!(|data: &[u8]| {
    let reply = String::from_utf8_lossy(data);
    let decision = parse_director_reply(&reply, &ROOM);
    if let Decision::Agent(id) = &decision {
        assert!(
            ROOM.contains(&id.as_str()),
            "chose {id:?}, who is not in the room"
        );
    }
    if reply.len() > MAX_REPLY_BYTES {
        assert!(matches!(
            decision,
            Decision::End(EndReason::InvalidReply(_))
        ));
    }
    let empty_room: [&str; 0] = [];
    assert!(!matches!(
        parse_director_reply(&reply, &empty_room),
        Decision::Agent(_)
    ));
});
