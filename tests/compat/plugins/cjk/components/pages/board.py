from langbot_plugin.api.definition.components.page import Page, PageRequest, PageResponse


class Board(Page):
    async def handle_api(self, request: PageRequest) -> PageResponse:
        if request.endpoint == "/echo":
            return PageResponse.ok({"echo": request.body, "method": request.method})
        return PageResponse.fail(f"no endpoint {request.endpoint}")
