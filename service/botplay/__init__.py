"""Playing the turns that fall due: the bot worker that claims games whose turn is
due in Redis (:mod:`service.store.due_games`) -- a bot's, or a turn timer's run out --
and plays them (:mod:`service.hosting.due_turns`).  ``three-thirteen-bots`` runs one
(:mod:`~service.botplay.__main__`); ``make run`` runs one inside the server, on the
embedded store.  No request plays a bot's move or an overdue turn."""
