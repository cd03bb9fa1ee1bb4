#!/usr/bin/env bash
# The README's curl session as a script: create a game, read a view, play a turn.
# Usage: examples/quickstart.sh [BASE_URL]   (default http://127.0.0.1:8000; needs curl, python3)
set -euo pipefail
BASE=${1:-http://127.0.0.1:8000}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

echo "# create a game for two players"
GAME=$(curl -fsS -X POST "$BASE/v1/games" -H 'Content-Type: application/json' \
  -d '{"players": [{"name": "ann"}, {"name": "bob"}]}')
echo "$GAME"
ID=$(echo "$GAME" | json 'd["id"]')
ANN=$(echo "$GAME" | json 'd["players"][0]["token"]')
BOB=$(echo "$GAME" | json 'd["players"][1]["token"]')

echo "# public view: whose turn is it?"
TURN=$(curl -fsS "$BASE/v1/games/$ID" | json 'd["round"]["turn"]')
if [ "$TURN" = 0 ]; then TOKEN=$ANN; else TOKEN=$BOB; fi
echo "seat $TURN to play"

echo "# that player's view: hand, legal moves, best arrangement"
curl -fsS "$BASE/v1/games/$ID/view" -H "Authorization: Bearer $TOKEN" \
  | json '{k: d[k] for k in ("version", "hand", "legal_moves", "arrangement")}'

echo "# draw from the stock (If-Match with the view's ETag: only on the state seen)"
ETAG=$(curl -fsS -o /dev/null -D - "$BASE/v1/games/$ID" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
VIEW=$(curl -fsS -X POST "$BASE/v1/games/$ID/moves" -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -H "If-Match: $ETAG" -H 'Idempotency-Key: turn-1-draw' \
  -d '{"type": "draw", "source": "stock"}')
echo "$VIEW" | json '{k: d[k] for k in ("version", "hand")}'

echo "# discard the costliest deadwood card"
CARD=$(echo "$VIEW" | json '(d["arrangement"]["deadwood"] or d["hand"])[-1]')
curl -fsS -X POST "$BASE/v1/games/$ID/moves" -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -d "{\"type\": \"discard\", \"card\": \"$CARD\"}" \
  | json '{k: d[k] for k in ("version", "hand")}'

echo "# what happened so far, as the other player sees it"
curl -fsS "$BASE/v1/games/$ID/events?after=0" | json '[e["type"] for e in d["events"]]'
