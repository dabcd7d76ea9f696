"""Message recall: earlier chat messages, one embedding each, searched like everything else.

Messages mined by ``add`` and messages indexed here are the same rows (episodes);
a temporary chat stores nothing.
"""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING

from . import timeutil
from .errors import Conflict, InputError, NotFound
from .model import ChatPage, Episode, MessageHit, MessagePage
from .recall import message_hit
from .write import check_id, check_role, check_room, check_text, message_context, message_embed_text
from .services import check_page, check_query

if TYPE_CHECKING:
    from .services import Services


class Messages:
    def __init__(self, services: "Services"):
        self._s = services

    def index(self, dataset: str, content: str, role: str = "user", chat: str | None = None,
              message_id: str | None = None, at: datetime | str | None = None, temporary: bool = False, *,
              project: str | None = None, environment: str | None = None) -> Episode | None:
        """Keep one message for recall without mining it; returns the stored message (None if temporary)."""
        scope = self._s.scope(dataset, project, environment)
        check_text(content, self._s.settings.max_text_chars, "message")
        check_role(role)
        check_id(chat, "chat")
        check_id(message_id, "message_id")
        check_room(self._s.store, self._s.settings, scope, len(content) + len(chat or "") + len(message_id or ""))
        when = self._s.writer.message_time(at)
        if temporary:
            return None
        episode = Episode(episode_id=message_id or f"ep_{uuid.uuid4().hex}", role=role, content=content, chat=chat,
                          at=when, created_at=timeutil.now())
        embedder = self._s.embedder
        context = message_context(self._s.store, scope, chat, when, episode.created_at)
        embed_text = message_embed_text(content)
        vector = embedder.embed(embed_text) if embedder is not None else None
        with self._s.store.transaction(scope):
            known = self._s.store.get_episode(scope, episode.episode_id)
            if known is not None:
                if known.content != content:
                    raise Conflict(f"message_id {episode.episode_id!r} already names a different message")
                return known
            self._s.store.insert_episode(scope, episode, vector, context=context, embed_text=embed_text)
        return episode

    def get(self, dataset: str, message_id: str, *, project: str | None = None,
            environment: str | None = None) -> Episode:
        found = self._s.store.get_episode(self._s.scope(dataset, project, environment), message_id)
        if found is None:
            raise NotFound(f"no message {message_id!r} in dataset {dataset!r}")
        return found

    def delete(self, dataset: str, message_id: str, *, project: str | None = None,
               environment: str | None = None) -> dict[str, int]:
        """Remove one message for good, with the facts mined from it and the queued turn that carried it
        (a person taking back what they said takes back what it taught); a value one of those facts had
        superseded is live again. Returns the rows removed per kind (``messages``, ``facts``, ``entities`` no fact names any more, ``jobs``) and
        the facts made live again (``restored``). Unlike ``delete_fact``, nothing stays in the history."""
        scope = self._s.scope(dataset, project, environment)
        check_id(message_id, "message_id")
        store = self._s.store
        with store.transaction(scope):
            said = store.get_episode(scope, message_id)
            if said is None:
                raise NotFound(f"no message {message_id!r} in dataset {dataset!r}")
            after = store.following_message(scope, said)
            removed = store.delete_messages(scope, [message_id])
            if after is not None:   # its keyword context held the end of the removed message: read it again
                store.set_episode_context(scope, after.episode_id,
                                          message_context(store, scope, after.chat, after.at, after.created_at))
        return removed

    def delete_chat(self, dataset: str, chat: str, *, project: str | None = None,
                    environment: str | None = None) -> dict[str, int]:
        """``delete`` for every message of one chat (a chat with none removes nothing: all zeros)."""
        scope = self._s.scope(dataset, project, environment)
        if not isinstance(chat, str) or not chat:
            raise InputError("chat must name the chat to delete")
        check_id(chat, "chat")
        return self._s.store.delete_messages(scope, chat=chat)

    def chats(self, dataset: str, limit: int = 50, offset: int = 0, *, project: str | None = None,
              environment: str | None = None) -> ChatPage:
        """The dataset's conversations (chats and threads), latest activity first, with their counts; the
        messages said outside any chat come as one with ``chat`` None."""
        check_page(limit, offset)
        scope = self._s.scope(dataset, project, environment)
        with self._s.store.reading(scope):
            chats, total = self._s.store.chats(scope, limit, offset)
        return ChatPage(chats=chats, total=total, limit=limit, offset=offset)

    def thread(self, dataset: str, chat: str | None, limit: int = 100, offset: int = 0, *,
               project: str | None = None, environment: str | None = None) -> MessagePage:
        """One conversation as it was said, oldest first: every role's turns (``chat`` None: the messages
        of no chat). Facts cite their message (``list_facts(message_id=…)``)."""
        check_id(chat, "chat")
        check_page(limit, offset)
        scope = self._s.scope(dataset, project, environment)
        with self._s.store.reading(scope):
            messages, total = self._s.store.chat_messages(scope, chat, limit, offset)
        return MessagePage(messages=messages, total=total, limit=limit, offset=offset)

    def search(self, dataset: str, query: str, exclude_chat: str | None = None, limit: int = 10, *,
               project: str | None = None, environment: str | None = None) -> list[MessageHit]:
        """Earlier messages that match ``query`` (hybrid ranking), optionally outside one chat."""
        scope = self._s.scope(dataset, project, environment)
        check_query(query, limit)
        with self._s.store.reading(scope):
            fused, signals = self._s.reader.rank(scope, query, kinds=("message",), exclude_chat=exclude_chat)
            order = sorted(fused, key=lambda item: -fused[item])[:limit]
            episodes = self._s.store.get_episodes(scope, [key for _, key in order])
        return [message_hit(e, round(fused["message", e.episode_id], 6), signals["message", e.episode_id])
                for e in episodes]
