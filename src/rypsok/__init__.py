"""rypsok: headless meta-search and page-fetch service for AI agents, served over MCP."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/rypsok/rypsok"
