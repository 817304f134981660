"""Names Korean writes in Hangul: products, places and languages a memory states as its value
("캐시는 레디스에 둔다", "서버는 도쿄 리전에 있다"). Korean has no capitals, so the gate's rule for a
name (a capital inside a sentence, a Latin word in Korean text) cannot see them. Each is read as
the Latin name it stands for, so "레디스" and "Redis" are one value and "멤캐시드" another."""

from __future__ import annotations

from memory_mcp.index import textproc

_NAMES: dict[str, tuple[str, ...]] = {
    # Tools and services.
    "github": ("깃허브", "깃헙"), "gitlab": ("깃랩",), "jenkins": ("젠킨스",),
    "teamcity": ("팀시티",), "docker": ("도커",), "kubernetes": ("쿠버네티스",), "helm": ("헬름",),
    "terraform": ("테라폼",), "ansible": ("앤서블",), "redis": ("레디스",), "memcached": ("멤캐시드",),
    "kafka": ("카프카",), "rabbitmq": ("래빗엠큐",), "postgresql": ("포스트그레스", "포스트그레스큐엘"),
    "mysql": ("마이에스큐엘",), "mongodb": ("몽고디비",), "elasticsearch": ("엘라스틱서치",),
    "opensearch": ("오픈서치",), "sqlite": ("에스큐엘라이트",), "nginx": ("엔진엑스",), "grafana": ("그라파나",),
    "prometheus": ("프로메테우스",), "sentry": ("센트리",), "datadog": ("데이터독",), "loki": ("로키",),
    "slack": ("슬랙",), "jira": ("지라",), "notion": ("노션",), "confluence": ("컨플루언스",),
    "react": ("리액트",), "vue": ("뷰제이에스",), "angular": ("앵귤러",), "svelte": ("스벨트",), "webpack": ("웹팩",),
    "django": ("장고",), "flask": ("플라스크",), "spring": ("스프링",), "nodejs": ("노드제이에스",),
    "aws": ("아마존",), "gcp": ("구글클라우드",), "azure": ("애저",), "cloudflare": ("클라우드플레어",),
    "vercel": ("버셀",), "heroku": ("헤로쿠",), "linux": ("리눅스",), "ubuntu": ("우분투",),
    # Languages.
    "python": ("파이썬",), "java": ("자바",), "kotlin": ("코틀린",), "rust": ("러스트",), "go": ("고랭",),
    "typescript": ("타입스크립트",), "javascript": ("자바스크립트",), "korean": ("한국어",),
    "english": ("영어",), "japanese": ("일본어",), "chinese": ("중국어",),
    # Places a region or an office is named for.
    "seoul": ("서울",), "busan": ("부산",), "incheon": ("인천",), "daejeon": ("대전",), "jeju": ("제주",),
    "pangyo": ("판교",), "tokyo": ("도쿄",), "osaka": ("오사카",), "singapore": ("싱가포르",),
    "hongkong": ("홍콩",), "sydney": ("시드니",), "mumbai": ("뭄바이",), "frankfurt": ("프랑크푸르트",),
    "london": ("런던",), "dublin": ("더블린",), "amsterdam": ("암스테르담",),
    "stockholm": ("스톡홀름",), "berlin": ("베를린",), "virginia": ("버지니아",), "oregon": ("오리건",),
    "ohio": ("오하이오",), "california": ("캘리포니아",), "newyork": ("뉴욕",), "toronto": ("토론토",),
}
_HANGUL = {hangul: latin for latin, forms in _NAMES.items() for hangul in forms}
# Longest first: 자바스크립트 before 자바, 구글클라우드 before 구글.
_BY_LENGTH = sorted(_HANGUL, key=len, reverse=True)


def name_of(word: str) -> str | None:
    """The Latin name a Hangul word is written for, its particle or ending aside ("레디스에" ->
    "redis", "서울로" -> "seoul"), or None. The rest after the name must be an ending the stemmer
    strips (or nothing), so 파이썬 is not read inside a longer word of its own."""
    for hangul in _BY_LENGTH:
        if word.startswith(hangul) and (len(word) == len(hangul) or textproc.korean_stem(word) == hangul):
            return _HANGUL[hangul]
    return None
